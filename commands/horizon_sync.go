package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/horizonimport"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/reconcile"
)

type horizonSyncOptions struct {
	g *Globals
	h *horizonFlags
	readFlags
	writeFlags
	PodURLs  []string
	Missing  []string
	PageSize int
	Apply    bool
	Prune    bool
	Force    bool
	Yes      bool
	Atomic   bool
}

func newHorizonSyncCommand(g *Globals, h *horizonFlags) *cobra.Command {
	o := &horizonSyncOptions{g: g, h: h}
	cmd := &cobra.Command{
		Use:   "sync --url https://CS",
		Short: "Pull, import and compare with the directory; with --apply, make the directory match Horizon",
		Long: `Pulls the federation from Horizon (as ` + "`cpactl horizon pull`" + `, into a temporary
directory removed at the end), imports it (as ` + "`cpactl horizon import`" + `) with what
the REST API does not carry taken from the directory, and compares it with
the directory as ` + "`cpactl diff`" + ` does: exit 0 when the directory matches
Horizon, 2 when Horizon changed.

With --apply it makes the directory match, as ` + "`cpactl apply`" + ` does: checked
first (lint; --force applies despite findings), in one transaction when the
server can take it (--atomic: all or nothing), each modify asserting what
it read. What Horizon does not carry (the pae-* thresholds, host features,
connecting sessions, policy thresholds, client computers) is kept: it came
from the directory. Objects Horizon no longer has are only deleted with
--prune (--yes, or a confirmation on a terminal).

Two accounts, two passwords, never mixed: the REST account (--domain,
--user; -W, -y or CPACTL_HORIZON_PASSWORD) and the directory's bind
(-H/--ldap-url or CPACTL_URL or the context, -D; --ldap-prompt-password,
--ldap-password-file or CPACTL_BIND_PASSWORD).`,
		Example: `  export CPACTL_HORIZON_PASSWORD=... CPACTL_BIND_PASSWORD=...
  cpactl horizon sync --url https://cs1.corp.example.com --domain CORP --user svc-cpactl \
      -H ldap://ldap.corp.example.com -D cn=admin,dc=vdiglobal,dc=vmware,dc=int
  cpactl horizon sync --url https://cs1.corp.example.com --domain CORP --user svc-cpactl --apply --prune --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", output.FormatUsage+" (the differences)")
	o.writeFlags.add(cmd)
	cmd.Flags().StringArrayVar(&o.PodURLs, "pod-url", nil, "POD=https://HOST: reach this pod's Connection Server here (repeatable)")
	cmd.Flags().StringArrayVar(&o.Missing, "allow-missing-pod", nil, "pull without this pod when none of its Connection Servers answers (what lies below it is kept from the directory; repeatable)")
	cmd.Flags().IntVar(&o.PageSize, "page-size", horizon.MaxPageSize, "records per page of a paged list (1-1000)")
	cmd.Flags().BoolVar(&o.Apply, "apply", false, "make the directory match Horizon (as cpactl apply)")
	cmd.Flags().BoolVar(&o.Prune, "prune", false, "with --apply, also delete what Horizon no longer has")
	cmd.Flags().BoolVar(&o.Force, "force", false, "with --apply, apply even when lint finds problems in Horizon's federation")
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "with --prune, delete without asking")
	cmd.Flags().BoolVar(&o.Atomic, "atomic", false, "with --apply, all or nothing: one transaction, or nothing written")
	addDirectoryFlags(cmd, g)
	return cmd
}

func (o *horizonSyncOptions) run() error {
	o.g.belowHorizon = true
	if !o.Apply && (o.Prune || o.Force || o.Yes || o.Atomic || o.DryRun) {
		return errorf("add --apply", "--prune, --force, --yes, --atomic and --dry-run go with --apply")
	}
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	podURLs, err := parsePodURLs(o.PageSize, o.PodURLs)
	if err != nil {
		return err
	}
	// The directory first: what it holds fills what Horizon does not
	// carry, and a wrong bind fails before Horizon is asked anything.
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	source := "the directory"
	if len(o.g.URLs) > 0 {
		source += " at " + strings.Join(o.g.URLs, ",")
	}
	base, err := horizonimport.ReadBase(st, source)
	if err != nil {
		return err
	}
	c, url, err := o.h.client(o.g, o.PageSize)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "cpactl-horizon-sync-*")
	if err != nil {
		return errorf("set TMPDIR to a writable directory", "cannot make a temporary directory for the pull: %v", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "pull")
	if _, err := o.g.pull(c, dir, horizon.PullOptions{URL: url, PodURLs: podURLs, AllowMissing: o.Missing}); err != nil {
		return err
	}
	opts := horizonimport.Options{DIT: st.DIT, Base: base}
	if m := o.g.progress.meter; m != nil {
		opts.Records = m.Stage("importing", "records", 0)
	}
	snap, rep, err := horizonimport.Snapshot(dir, opts)
	if m := o.g.progress.meter; m != nil {
		m.End()
	}
	if err != nil {
		return importFailed("the pull", err)
	}
	o.g.noteImport(rep)
	label := "Horizon's federation (" + o.h.URL + ")"
	check := fileCheck{errOut: o.g.IO.Err, file: label, force: o.Force, warn: o.g.warn, g: o.g}
	if !o.Apply {
		desired := reconcile.NewStateFromSnapshot(st.DIT, snap)
		for _, pr := range append(append([]reconcile.Problem(nil), desired.Problems...), desired.Foreign...) {
			o.g.warn("%s: %s (not compared)", label, pr)
		}
		r, err := o.g.showDiff(p, st, desired, diffColumns{current: "current", desired: "desired"})
		if err != nil {
			return err
		}
		if !r.Identical {
			fmt.Fprintln(o.g.IO.Err, "hint: `cpactl horizon sync --apply` makes the directory match Horizon")
			return silentExit(ExitDiff)
		}
		return nil
	}
	desired, err := check.checkDesired(snap, st.DIT.Base)
	if err != nil {
		return err
	}
	a := &applyOptions{g: o.g, writeFlags: o.writeFlags, File: label, Prune: o.Prune, Force: o.Force, Yes: o.Yes, Atomic: o.Atomic}
	return a.applyState(st, check, desired)
}
