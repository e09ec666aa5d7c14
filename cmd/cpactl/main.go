// Command cpactl manages and explains a Horizon 8 Cloud Pod Architecture
// federation kept in OpenLDAP. See README.md and `cpactl --help`.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/cpactl/cpactl/commands"
)

func main() {
	// Ctrl-C outside a prompt: LDAP writes are single operations or
	// transactions, so stopping between them leaves nothing half-written
	// (a commit in flight is waited for: commands.Interrupted).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		os.Exit(commands.Interrupted(os.Stderr, sigs))
	}()
	os.Exit(commands.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
