package sshhost

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Binary is a local executable to put on hosts: its path, digest and platform.
type Binary struct {
	Path   string
	SHA256 string
	// OS and Arch are uname's words for the platform it runs on ("Linux", "x86_64").
	OS, Arch string
	Size     int64
}

var (
	binMu    sync.Mutex
	binCache = map[string]Binary{}
)

// ReadBinary digests the executable at path and reads its platform from its ELF header.
func ReadBinary(path string) (Binary, error) {
	binMu.Lock()
	defer binMu.Unlock()
	st, err := os.Stat(path)
	if err != nil {
		return Binary{}, fmt.Errorf("the binary to upload: %w", err)
	}
	key := fmt.Sprintf("%s %d %d", path, st.Size(), st.ModTime().UnixNano())
	if b, ok := binCache[key]; ok {
		return b, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return Binary{}, fmt.Errorf("the binary to upload: %w", err)
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return Binary{}, fmt.Errorf("the binary to upload, %s: %w", path, err)
	}
	b := Binary{Path: path, SHA256: hex.EncodeToString(sum.Sum(nil)), Size: st.Size()}
	ef, err := elf.NewFile(f)
	if err != nil {
		return Binary{}, fmt.Errorf("the binary to upload, %s, is not an ELF executable (%v): hosts run Linux; build one with GOOS=linux", path, err)
	}
	b.OS = "Linux"
	switch ef.Machine {
	case elf.EM_X86_64:
		b.Arch = "x86_64"
	case elf.EM_AARCH64:
		b.Arch = "aarch64"
	case elf.EM_386:
		b.Arch = "i686"
	case elf.EM_ARM:
		b.Arch = "armv7l"
	case elf.EM_RISCV:
		b.Arch = "riscv64"
	default:
		b.Arch = ef.Machine.String()
	}
	binCache[key] = b
	return b, nil
}

// goArch is GOARCH for a uname machine name, for the advice to build for a host.
func goArch(uname string) string {
	switch uname {
	case "x86_64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "i386", "i686":
		return "386"
	case "riscv64":
		return "riscv64"
	}
	if strings.HasPrefix(uname, "armv") {
		return "arm"
	}
	return uname
}

// Installed is where a binary is on a host and whether this call uploaded it.
type Installed struct {
	Path     string
	Uploaded bool
}

// Install puts b on the host under $XDG_CACHE_HOME/leaderlab (default ~/.cache/leaderlab), named
// by its digest, unless a file of that digest is already there; a host of another platform is an
// error that says which binary to build. The upload goes to a temporary name renamed into place,
// and is checked by its digest on the host.
func (h *Host) Install(ctx context.Context, b Binary, name string) (Installed, error) {
	short := b.SHA256[:16]
	probe := `uname -sm; d="${XDG_CACHE_HOME:-$HOME/.cache}/leaderlab"; f="$d/` + name + `-` + short + `"; echo "$f"; ` +
		`if [ -x "$f" ]; then sha256sum "$f" 2>/dev/null || echo missing; else echo missing; fi`
	out, err := h.Run(ctx, probe, nil)
	if err != nil {
		return Installed{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		return Installed{}, fmt.Errorf("host %s: probing it gave %q: want uname, a path and a digest (is its shell a POSIX shell with coreutils?)", h.Target, truncate(string(out), 200))
	}
	plat := strings.Fields(lines[0])
	if len(plat) != 2 || plat[0] != b.OS || plat[1] != b.Arch {
		return Installed{}, fmt.Errorf("host %s runs %s, but the binary to upload (%s) is for %s %s: build one for it (CGO_ENABLED=0 GOOS=linux GOARCH=%s go build -o leaderlab-%s .) and name it in LEADERLAB_REMOTE_BINARY",
			h.Target, lines[0], b.Path, b.OS, b.Arch, goArch(plat[len(plat)-1]), goArch(plat[len(plat)-1]))
	}
	path := lines[1]
	if f := strings.Fields(lines[2]); len(f) > 0 && f[0] == b.SHA256 {
		return Installed{Path: path}, nil
	}
	src, err := os.Open(b.Path)
	if err != nil {
		return Installed{}, fmt.Errorf("the binary to upload: %w", err)
	}
	defer src.Close()
	q := shellQuote(path)
	put := `umask 077; mkdir -p "$(dirname ` + q + `)" && t=` + q + `.tmp.$$ && cat > "$t" && chmod 755 "$t" && ` +
		`s=$(sha256sum "$t") && [ "${s%% *}" = ` + b.SHA256 + ` ] && mv -f "$t" ` + q + ` || { rm -f "$t"; echo "upload of ` + q + ` failed or arrived damaged" >&2; exit 1; }`
	if _, err := h.Run(ctx, put, src); err != nil {
		return Installed{}, fmt.Errorf("upload the binary: %w", err)
	}
	return Installed{Path: path, Uploaded: true}, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Quote quotes s for a POSIX shell (for callers that build commands).
func Quote(s string) string { return shellQuote(s) }
