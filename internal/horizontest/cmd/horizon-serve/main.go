// Command horizon-serve runs the test Horizon (internal/horizontest) over
// a pull directory, as a process, for scripts/bench: one TLS server per
// pod on 127.0.0.1, answering every read `cpactl horizon pull` makes from
// the directory's files. It is a test tool, not part of cpactl.
//
//	go run ./internal/horizontest/cmd/horizon-serve -dir PULL -env FILE
//
// It writes FILE once the servers listen: shell assignments of
// HORIZON_URL (the server to give the pull as --url), HORIZON_CA_FILE,
// HORIZON_DOMAIN, HORIZON_USER and HORIZON_PASSWORD_FILE (the test
// account's password, for -y), and HORIZON_POD_ARGS, a file of the
// --pod-url flags that reach the other pods, one a line. It serves until
// SIGINT or SIGTERM, then says on stderr how many requests it answered.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cpactl/cpactl/internal/horizontest"
)

func main() {
	dir := flag.String("dir", "", "the pull directory to serve")
	env := flag.String("env", "", "the file to write the shell assignments to")
	flag.Parse()
	if *dir == "" || *env == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: horizon-serve -dir PULL -env FILE")
		os.Exit(2)
	}
	if err := run(*dir, *env); err != nil {
		fmt.Fprintln(os.Stderr, "horizon-serve:", err)
		os.Exit(1)
	}
}

func run(dir, env string) error {
	tmp, err := os.MkdirTemp("", "horizon-serve-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	f, err := horizontest.NewPull(dir, tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	pw := filepath.Join(tmp, "password")
	if err := os.WriteFile(pw, []byte(horizontest.Password), 0o600); err != nil {
		return err
	}
	podArgs := filepath.Join(tmp, "pod-args")
	if err := os.WriteFile(podArgs, []byte(strings.Join(f.PodURLFlags(), "\n")+"\n"), 0o600); err != nil {
		return err
	}
	vars := fmt.Sprintf("HORIZON_URL=%s\nHORIZON_CA_FILE=%s\nHORIZON_DOMAIN=%s\nHORIZON_USER=%s\nHORIZON_PASSWORD_FILE=%s\nHORIZON_POD_ARGS=%s\n",
		f.URL(f.MainPod()), f.CAFile, horizontest.Domain, horizontest.User, pw, podArgs)
	// Written whole, then renamed: a reader sees all of it or nothing.
	if err := os.WriteFile(env+".tmp", []byte(vars), 0o600); err != nil {
		return err
	}
	if err := os.Rename(env+".tmp", env); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	reqs := f.Requests()
	fmt.Fprintf(os.Stderr, "horizon-serve: answered %d requests (%d logins) for %d pods\n", len(reqs), len(f.Sessions()), len(f.Pods()))
	return nil
}
