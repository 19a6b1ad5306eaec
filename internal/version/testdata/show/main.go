// Command show prints the build this package reads, for the test that
// the linker's settings reach a binary.
package main

import (
	"encoding/json"
	"os"

	"github.com/sundial-cron/sundial/internal/version"
)

func main() {
	json.NewEncoder(os.Stdout).Encode(version.Get())
}
