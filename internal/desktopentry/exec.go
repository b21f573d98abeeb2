package desktopentry

import (
	"fmt"
	"strings"
)

// reserved are the characters an unquoted Exec argument may not contain.
const reserved = " \t\n\r\"'\\><~|&;$*?#()`"

// parseExec splits an Exec value (string escapes already applied) into arguments and
// checks its field codes:
//   - arguments are separated by spaces; an argument containing a reserved character is
//     quoted in double quotes, inside which only \" \` \$ \\ are escapes;
//   - %f %F %u %U %i stand alone as an argument; at most one of %f %F %u %U occurs;
//   - %c %k %% may sit inside an unquoted argument; the deprecated %d %D %n %N %v %m are
//     removed; any other % sequence, and any field code but %% inside quotes, is an error;
//   - the program (the first argument) holds no field code.
func parseExec(s string) ([]token, FileArgs, error) {
	var out []token
	i := 0
	for i < len(s) {
		if s[i] == ' ' {
			i++
			continue
		}
		if len(out) == MaxArgs {
			return nil, 0, fmt.Errorf("more than %d arguments", MaxArgs)
		}
		if s[i] == '"' {
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '"' {
					closed = true
					i++
					break
				}
				if c == '\\' {
					if i+1 == len(s) || !strings.ContainsRune("\"`$\\", rune(s[i+1])) {
						return nil, 0, fmt.Errorf("argument %d: a backslash inside quotes must escape \", `, $ or \\", len(out))
					}
					i++
					c = s[i]
				}
				b.WriteByte(c)
				i++
			}
			if !closed {
				return nil, 0, fmt.Errorf("argument %d: unterminated quote", len(out))
			}
			if i < len(s) && s[i] != ' ' {
				return nil, 0, fmt.Errorf("argument %d: a closing quote must end the argument", len(out))
			}
			out = append(out, token{text: b.String(), quoted: true})
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			if strings.IndexByte(reserved, s[j]) >= 0 {
				return nil, 0, fmt.Errorf("argument %d: reserved character %q must be quoted", len(out), s[j])
			}
			j++
		}
		out = append(out, token{text: s[i:j]})
		i = j
	}
	if len(out) == 0 || out[0].text == "" {
		return nil, 0, fmt.Errorf("no program")
	}
	files := NoFiles
	for n, t := range out {
		for k := 0; k < len(t.text); k++ {
			if t.text[k] != '%' {
				continue
			}
			if k+1 == len(t.text) {
				return nil, 0, fmt.Errorf("argument %d: a lone %% (write %%%% for a literal one)", n)
			}
			k++
			code := t.text[k]
			if code == '%' {
				continue
			}
			if t.quoted {
				return nil, 0, fmt.Errorf("argument %d: field code %%%c inside a quoted argument", n, code)
			}
			if n == 0 {
				return nil, 0, fmt.Errorf("the program holds field code %%%c", code)
			}
			switch code {
			case 'f', 'F', 'u', 'U', 'i':
				if t.text != "%"+string(code) {
					return nil, 0, fmt.Errorf("argument %d: %%%c must be an argument of its own", n, code)
				}
				if code == 'i' {
					continue
				}
				if files != NoFiles {
					return nil, 0, fmt.Errorf("more than one of %%f %%F %%u %%U")
				}
				files = map[byte]FileArgs{'f': OneFile, 'F': ManyFiles, 'u': OneURL, 'U': ManyURLs}[code]
			case 'c', 'k', 'd', 'D', 'n', 'N', 'v', 'm':
			default:
				return nil, 0, fmt.Errorf("argument %d: unknown field code %%%c", n, code)
			}
		}
	}
	return out, files, nil
}

// Expand returns the argument vector of a launch of e with files (local file paths or
// URLs, already checked by the caller): %f/%u become the one file or vanish when there is
// none, %F/%U every file, %i "--icon Icon" (or nothing without an Icon), %c the Name, %k
// the entry's file, %% a percent sign; the deprecated codes vanish, and an argument made
// only of them is dropped. More files than the field code takes is an error, and so is
// any file for an entry that takes none.
func (e *Entry) Expand(files []string) ([]string, error) {
	if len(e.args) == 0 {
		return nil, fmt.Errorf("%s has no Exec line", e.label())
	}
	if m := e.Files.Max(); m >= 0 && len(files) > m {
		if m == 0 {
			return nil, fmt.Errorf("%s takes no arguments (its Exec has no %%f, %%F, %%u or %%U)", e.label())
		}
		return nil, fmt.Errorf("%s takes one file or URL (%s), not %d", e.label(), e.Files, len(files))
	}
	var argv []string
	for _, t := range e.args {
		if t.quoted {
			argv = append(argv, strings.ReplaceAll(t.text, "%%", "%"))
			continue
		}
		switch t.text {
		case "%f", "%u", "%F", "%U":
			argv = append(argv, files...)
			continue
		case "%i":
			if e.Icon != "" {
				argv = append(argv, "--icon", e.Icon)
			}
			continue
		}
		var b strings.Builder
		onlyRemoved := true
		for k := 0; k < len(t.text); k++ {
			c := t.text[k]
			if c != '%' {
				b.WriteByte(c)
				onlyRemoved = false
				continue
			}
			k++
			switch t.text[k] {
			case '%':
				b.WriteByte('%')
				onlyRemoved = false
			case 'c':
				b.WriteString(e.Name)
				onlyRemoved = false
			case 'k':
				b.WriteString(e.File)
				onlyRemoved = false
			}
		}
		if b.Len() == 0 && onlyRemoved {
			continue
		}
		argv = append(argv, b.String())
	}
	return argv, nil
}

func (e *Entry) label() string {
	if e.ID != "" {
		return e.ID
	}
	return "the desktop entry " + fmt.Sprintf("%q", e.Name)
}
