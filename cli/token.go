package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/signin"
)

// RunToken runs "sundial token new --identity ID": it prints a fresh
// static token and the line of the server's token file that maps its
// hash to the identity.
func RunToken(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "new" {
		fmt.Fprintf(stderr, "sundial token: want \"new --identity serviceAccount:EMAIL\"\n%s", Usage)
		return ExitUsage
	}
	fs := flag.NewFlagSet("sundial token new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	idFlag := fs.String("identity", "", "who the token is: serviceAccount:EMAIL or user:EMAIL")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return ExitUsage
	}
	id, err := access.ParseIdentity(*idFlag)
	if err != nil || (id.Kind() != access.KindUser && id.Kind() != access.KindServiceAccount) || fs.NArg() != 0 {
		fmt.Fprintf(stderr, "sundial token new: --identity %q: want serviceAccount:EMAIL or user:EMAIL\n", *idFlag)
		return ExitUsage
	}
	token, line := signin.NewToken(id)
	fmt.Fprintf(stdout, "token: %s\n", token)
	fmt.Fprintf(stdout, "line for the server's --static-tokens-file (it holds only the token's hash):\n%s\n", line)
	fmt.Fprintln(stderr, "Give the token to its holder now: it is shown once and the server keeps only its hash.")
	return 0
}
