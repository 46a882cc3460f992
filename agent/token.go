package agent

import (
	"bytes"
	"fmt"
	"os"
)

// LoadToken reads the shared token from path: the file's bytes with surrounding whitespace
// trimmed, at least MinTokenLen of them. The launcher and every agent read the same token.
func LoadToken(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w (want a readable file holding a shared secret of at least %d bytes, e.g. from: head -c 32 /dev/urandom | base64 > %s)", path, err, MinTokenLen, path)
	}
	tok := bytes.TrimSpace(b)
	if err := checkToken(tok); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// checkToken refuses a token too short to be a secret.
func checkToken(tok []byte) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("token of %d bytes (after trimming whitespace); want at least %d bytes of shared secret, e.g. from: head -c 32 /dev/urandom | base64", len(tok), MinTokenLen)
	}
	return nil
}
