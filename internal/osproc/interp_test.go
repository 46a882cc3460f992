package osproc

import (
	"debug/buildinfo"
	"os"
	"strings"
	"testing"
)

// TestInterpreter: the test binary names a loader exactly when it was built with cgo (it links net,
// which uses libc then), and a file that is no executable is an error naming it.
func TestInterpreter(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	cgo := false
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" {
			cgo = s.Value == "1"
		}
	}
	interp, err := Interpreter(exe)
	if err != nil || (interp != "") != cgo || (cgo && !strings.Contains(interp, "ld-")) {
		t.Errorf("Interpreter(test binary, cgo %v) = %q, %v", cgo, interp, err)
	}
	text := t.TempDir() + "/notes.txt"
	os.WriteFile(text, []byte("not an ELF file\n"), 0o644)
	if _, err := Interpreter(text); err == nil || !strings.Contains(err.Error(), "notes.txt: not an executable") {
		t.Errorf("Interpreter(a text file): %v; want an error naming it", err)
	}
}
