//go:build !linux

package logs

import "os"

// writeLine writes b to f (writeline_linux.go says why Linux makes a raw system call).
func writeLine(f *os.File, _ uintptr, b []byte) error {
	_, err := f.Write(b)
	return err
}
