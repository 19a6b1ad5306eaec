package signin

import (
	"fmt"
	"os"
	"strings"
)

// minTokenFileLen keeps a guessable token out of service.
const minTokenFileLen = 16

// ReadTokenFile reads a file that holds one token or secret
// (--admin-token-file, --config-token-file, --config-webhook-secret-file):
// its content without surrounding white space. A missing file, an empty
// one or a token shorter than 16 bytes is an error naming the file;
// callers prefix the flag it came from. A file of static tokens, which
// names each token's identity, is ReadStaticTokens'.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if len(token) < minTokenFileLen {
		return "", fmt.Errorf("%s: the token has %d bytes; want at least %d", path, len(token), minTokenFileLen)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("%s: the token holds white space; want one line with one token", path)
	}
	return token, nil
}
