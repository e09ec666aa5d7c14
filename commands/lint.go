package commands

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/lint"
	"github.com/cpactl/cpactl/output"
)

type lintOptions struct {
	g *Globals
	readFlags
}

func newLintCommand(g *Globals) *cobra.Command {
	o := &lintOptions{g: g}
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Check the federation's configuration; exit 2 when something is wrong",
		Long: `Reads the whole federation (live, or an LDIF snapshot with --from) and
reports, for each problem, the object, what is wrong and how to fix it:

  unreadable-value                      a value that does not parse
  duplicate-name                        pods, pools, farms, hosts or Connection Servers sharing a name
  dangling-reference                    a DN naming an entry that does not exist (or of the wrong kind)
  preferred-site-missing                a preferred-site list naming a site that does not exist
  preferred-site-self                   a preferred-site list naming the site itself
  preferred-site-duplicate              a preferred site listed twice
  preferred-rank-gap                    preferred-site ranks that are not 0..n-1
  ignore-high-load-without-policy       ignore high-load preferred sites with load distribution none
  ignore-high-load-without-preferred-sites  ignore high-load preferred sites without use preferred sites
  preferred-sites-non-any-scope         use preferred sites on a scope other than ANY
  require-home-site-without-use-home-site
  option-not-allowed                    auto clean-up, client restrictions or multiple sessions on the wrong kind of entitlement
  pool-in-two-entitlements              a pool held by more than one entitlement
  dedicated-floating-mismatch           a dedicated pool in a floating entitlement, or the reverse
  pool-type-mismatch                    an application pool in a desktop entitlement, or the reverse
  farm-in-another-pod                   a farm-backed pool whose farm is in another pod
  out-of-range                          thresholds, load indexes, counters or settings out of range
  entitled-users-without-pool           entitled users of an enabled entitlement that cannot reach any pool
  home-site-override-not-entitled       a home-site override for a user or group not entitled to its entitlement
  entitled-users-without-home-site      entitled users with no home site for an entitlement that requires one (resolve denies them)
  client-restrictions-without-computer  client restrictions, and no client computer in a group entitled (resolve denies every request)

Exit 0 when clean, 2 with findings (the stable "check" names above are in
-o json).`,
		Example: `  cpactl lint
  cpactl lint --from backup.ldif -o json | jq -r '.[].check' | sort | uniq -c`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *lintOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	done := o.g.track(st, "reading", "entries", 0)
	inv, err := st.Inventory()
	done()
	if err != nil {
		return err
	}
	findings := lint.Run(*inv)
	if findings == nil {
		findings = []lint.Finding{}
	}
	err = p.Print(findings, func(w io.Writer) error {
		if len(findings) == 0 {
			_, err := fmt.Fprintln(w, "lint: no findings")
			return err
		}
		rows := make([][]string, 0, len(findings))
		for _, f := range findings {
			rows = append(rows, []string{f.Kind + " " + f.Object, f.Check, f.Message, f.Fix})
		}
		return output.Rows(w, []string{"object", "check", "finding", "fix"}, rows)
	})
	if err != nil {
		return err
	}
	if len(findings) > 0 {
		fmt.Fprintf(o.g.IO.Err, "lint: %d %s\n", len(findings), plural(len(findings), "finding", "findings"))
		return silentExit(ExitDiff)
	}
	return nil
}
