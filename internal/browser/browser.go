// Package browser finds the headless browser the page tests drive (Debian's chromium package).
package browser

import (
	"os"
	"os/exec"
)

// Path is chromium's executable, or "" when there is none.
func Path() string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}
