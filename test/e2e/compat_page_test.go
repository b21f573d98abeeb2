package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// compatPage is a page served on 127.0.0.1: a big button at the top that posts every click,
// and below it a text field, focused on load, that posts its value on every input event.
type compatPage struct {
	url string

	mu       sync.Mutex // mu guards the fields below
	isLoaded bool
	seq      int // the highest sequence number posted: requests may arrive out of order
	val      string
	clicks   int
}

const compatPageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>compat page</title>
<style>body{margin:0} button{display:block;width:100%;height:260px;font-size:40px} textarea{width:90%;height:200px}</style>
</head><body><button id="b">Click me</button><textarea id="f" autofocus></textarea>
<script>
const f = document.getElementById("f");
let seq = 0;
f.addEventListener("input", () => fetch("/value", {method: "POST", body: ++seq + "\n" + f.value}));
document.getElementById("b").addEventListener("click", () => fetch("/click", {method: "POST"}));
window.addEventListener("load", () => { f.focus(); fetch("/loaded", {method: "POST"}); });
</script></body></html>`

func startCompatPage(t *testing.T) *compatPage {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg := &compatPage{url: "http://" + l.Addr().String() + "/"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, compatPageHTML)
	})
	mux.HandleFunc("POST /loaded", func(w http.ResponseWriter, r *http.Request) {
		pg.mu.Lock()
		pg.isLoaded = true
		pg.mu.Unlock()
	})
	mux.HandleFunc("POST /click", func(w http.ResponseWriter, r *http.Request) {
		pg.mu.Lock()
		pg.clicks++
		pg.mu.Unlock()
	})
	mux.HandleFunc("POST /value", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		num, value, _ := strings.Cut(string(b), "\n")
		seq, err := strconv.Atoi(num)
		if err != nil {
			return
		}
		pg.mu.Lock()
		if seq > pg.seq {
			pg.seq, pg.val = seq, value
		}
		pg.mu.Unlock()
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return pg
}

func (pg *compatPage) loaded() bool {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.isLoaded
}

func (pg *compatPage) value() string {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.val
}

func (pg *compatPage) clickCount() int {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.clicks
}

// remarshal converts a decoded JSON value into out.
func remarshal(t *testing.T, in any, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}
