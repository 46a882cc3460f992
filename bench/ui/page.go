package ui

import (
	"embed"
	"net/http"
	"strings"
	"sync"
)

// The page: one HTML document with its style and script inlined (assets/), nothing loaded from
// anywhere else. The script is plain JavaScript, no library, as the report's.

//go:embed assets/ui.html assets/ui.css assets/ui.js
var assets embed.FS

// pageHTML is the page, assembled once, when it is first served.
var pageHTML = sync.OnceValue(func() string {
	read := func(name string) string {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	return strings.NewReplacer("/*CSS*/", read("ui.css"), "/*JS*/", read("ui.js")).Replace(read("ui.html"))
})

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(pageHTML()))
}
