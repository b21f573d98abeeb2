package worker

import (
	"errors"
	"sort"

	"github.com/cua-host/cua-host/worker/desktop"
	"github.com/cua-host/cua-host/worker/tool"
)

// errCatalog is why the catalog's desktop tools have no backend: they are only listed.
var errCatalog = errors.New("the tool catalog lists tools and runs none")

// Catalog returns every tool a shipped worker registers (DesktopRegistry and the
// builtins), sorted by name, with its description, input schema and annotations. It opens
// no display and runs nothing: the returned tools carry no handler. `cua-host list-tools`
// prints it.
func Catalog() []tool.Tool {
	reg := tool.NewRegistry()
	(&worker{}).registerBuiltins(reg)
	desktop.Register(reg, nil, desktop.Options{Unavailable: errCatalog})
	var tools []tool.Tool
	for _, t := range reg.Tools() {
		c := *t
		c.Handler = nil
		tools = append(tools, c)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}
