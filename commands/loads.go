package commands

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/output"
)

type loadsOptions struct {
	g *Globals
	readFlags
	Entitlement string
	whatIf      whatIfFlags
}

func newLoadsCommand(g *Globals) *cobra.Command {
	o := &loadsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "loads --entitlement GE",
		Short: "The loads the broker sees for one global entitlement: sites, pods and pools",
		Long: `Prints the loads a resolve of the global entitlement compares, under the
entitlement's own Session Load Distribution policy: every site (by name),
each pod holding a pool of the entitlement and each such pool, with its
load (LOAD: the mean pool load; SESSION: sessions over capacity; NONE
defines no load and prints "-"), its sessions and capacity, and whether the
load is above pae-LoadThresholdForSite. Sites a preferred-site search of
the entitlement would skip (Use Preferred Sites, Ignore Preferred Sites
with High Load, scope ANY) are marked. Loads are over every online pod; a
LOCAL or SITE scope sees its own pod's or site's share.

The what-ifs of resolve apply (--with, --setting, --pool-sessions,
--host-load, --preferred, --offline-pod): see the loads a change would give
before making it. Nothing is written. -o json and -o yaml are a stable
contract; --from reads an LDIF snapshot with the same answer.

Exit codes: 0, 3 when the entitlement (or an object a what-if names) does
not exist, 1 on other errors.`,
		Example: `  cpactl loads --entitlement "Sales Desktops"

  # would UK still be skipped with 10 more sessions in uk-desktops?
  cpactl loads --entitlement "Sales Desktops" --pool-sessions uk-desktops=60 --setting pae-LoadThresholdForSite=99

  cpactl loads --from backup.ldif --entitlement "Sales Desktops" -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Entitlement == "" {
				return errorf("name the global entitlement: --entitlement GE", "--entitlement is required")
			}
			if err := o.whatIf.validate(); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Entitlement, "entitlement", "", "the global entitlement (required)")
	o.whatIf.add(cmd)
	o.readFlags.add(cmd)
	return cmd
}

func (o *loadsOptions) run() error {
	p, base, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	st, whatIfs, offline, err := o.whatIf.overlay(base)
	if err != nil {
		return err
	}
	data, err := st.LoadsFederation(o.Entitlement)
	if err != nil {
		return err
	}
	r, err := broker.Loads(data.Federation, o.Entitlement, offline, whatIfs)
	if err != nil {
		return st.WithSuggestion(err)
	}
	r.Warnings = append(append([]string{}, data.Warnings...), r.Warnings...)
	return p.Print(r, func(w io.Writer) error { return writeLoads(w, r) })
}

// writeLoads renders the loads for a person: one row per site, then its
// pods and their pools below it.
func writeLoads(w io.Writer, r *broker.LoadsReport) error {
	ew := &errWriter{w: w}
	skips := "a preferred-site search does not skip sites for load"
	if r.SkipsHighLoad {
		skips = "a preferred-site search skips sites above it (Ignore Preferred Sites with High Load)"
	}
	ew.printf("loads of %s (policy %s, scope %s); pae-LoadThresholdForSite %d: %s\n", r.Entitlement, r.Policy, r.Scope, r.Threshold, skips)
	if len(r.WhatIf) > 0 {
		ew.printf("what-if (in memory, nothing written): %s\n", broker.DescribeWhatIfs(r.WhatIf))
	}
	if ew.err != nil {
		return ew.err
	}
	above := fmt.Sprintf("above %d", r.Threshold)
	var rows [][]string
	for _, s := range r.Sites {
		note := ""
		switch {
		case s.PreferredSkip:
			note = above + ": skipped as a preferred site"
		case s.AboveThreshold:
			note = above
		case len(s.Pods) == 0:
			note = "no pool of " + r.Entitlement
		}
		rows = append(rows, []string{s.Site, "", "", "", showLoad(s.Load), count(s.Sessions), count(s.Capacity), note})
		for _, pod := range s.Pods {
			note := ""
			switch {
			case !pod.Online:
				note = "offline"
			case pod.AboveThreshold:
				note = above
			}
			rows = append(rows, []string{s.Site, pod.Pod, "", "", showLoad(pod.Load), count(pod.Sessions), count(pod.Capacity), note})
			for _, pl := range pod.Pools {
				kind := string(pl.Kind)
				if pl.Farm != "" {
					kind += " (farm " + pl.Farm + ")"
				}
				rows = append(rows, []string{s.Site, pod.Pod, pl.Pool, kind, showLoad(pl.Load), count(pl.Sessions), count(pl.Capacity), pl.Unavailable})
			}
		}
	}
	if err := output.Rows(w, []string{"site", "pod", "pool", "kind", "load", "sessions", "capacity", "note"}, rows); err != nil {
		return err
	}
	if len(r.Warnings) > 0 {
		ew.printf("\nWARNINGS\n")
		for _, warning := range r.Warnings {
			ew.printf("  %s\n", warning)
		}
	}
	return ew.err
}

func showLoad(load *float64) string {
	if load == nil {
		return "-"
	}
	return strconv.FormatFloat(*load, 'f', 2, 64)
}

func count(n int64) string { return strconv.FormatInt(n, 10) }
