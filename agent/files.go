package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxListed bounds a list reply (a path and a size each, well under a frame).
const maxListed = 4096

func (s *Server) opList(body []byte) (any, error) {
	r, err := s.runOf(body)
	if err != nil {
		return nil, err
	}
	files, err := listRunDir(r.dir)
	if err != nil {
		return nil, refuse("list run %s: %v", r.id, err)
	}
	return ListReply{Dir: r.dir, Files: files}, nil
}

// listRunDir lists the regular files under dir, as slash-separated relative paths. Symbolic links
// are not followed nor listed, and names starting with "." (temporary files being written) are
// skipped.
func listRunDir(dir string) ([]FileInfo, error) {
	var out []FileInfo
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if len(out) == maxListed {
			return fmt.Errorf("more than %d files", maxListed)
		}
		out = append(out, FileInfo{Path: filepath.ToSlash(rel), Size: info.Size()})
		return nil
	})
	return out, err
}

// checkRelPath refuses a path that is not a plain relative path inside a run directory.
func checkRelPath(p string) error {
	switch {
	case p == "" || len(p) > 1024:
		return fmt.Errorf("path of %d bytes: want a relative path of 1 to 1024 bytes, as list gives it", len(p))
	case strings.ContainsRune(p, 0) || strings.ContainsRune(p, '\\'):
		return fmt.Errorf("path %q: want a slash-separated relative path inside the run directory, as list gives it", truncate(p, 80))
	case path.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p:
		return fmt.Errorf("path %q is not inside the run directory: want a relative path without .., as list gives it (e.g. nodes/1.jsonl)", truncate(p, 80))
	}
	return nil
}

func (s *Server) opFetch(body []byte) (any, error) {
	var req FetchRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if req.Max < 1 || req.Max > MaxChunk {
		return nil, refuse("fetch of %d bytes: want 1 to %d (MaxChunk) bytes a request", req.Max, MaxChunk)
	}
	if req.Offset < 0 {
		return nil, refuse("fetch at offset %d: want 0 or more", req.Offset)
	}
	if err := checkRelPath(req.Path); err != nil {
		return nil, refuse("%v", err)
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	out, err := readChunk(r.dir, req.Path, req.Offset, req.Max)
	if err != nil {
		return nil, refuse("fetch %s of run %s: %v", req.Path, r.id, err)
	}
	return out, nil
}

// readChunk reads up to max bytes of dir/rel from off. It opens the file through an os.Root, so a
// symbolic link that leads out of dir is refused too.
func readChunk(dir, rel string, off int64, max int) (FetchReply, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return FetchReply{}, err
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return FetchReply{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return FetchReply{}, err
	}
	if !info.Mode().IsRegular() {
		return FetchReply{}, fmt.Errorf("not a regular file (%v)", info.Mode().Type())
	}
	size := info.Size()
	if off > size {
		return FetchReply{}, fmt.Errorf("offset %d is beyond the end of the file (%d bytes)", off, size)
	}
	buf := make([]byte, min(int64(max), size-off))
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return FetchReply{}, err
	}
	return FetchReply{Data: buf[:n], Size: size, EOF: off+int64(n) >= size}, nil
}
