package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/horizon"
	"github.com/cpactl/cpactl/horizonpush"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/output"
)

type horizonPushOptions struct {
	g *Globals
	h *horizonFlags
	readFlags
	Yes bool
}

func newHorizonPushCommand(g *Globals, h *horizonFlags) *cobra.Command {
	o := &horizonPushOptions{g: g, h: h}
	cmd := &cobra.Command{
		Use:   "push --url https://CS [--from FILE.ldif] [--yes]",
		Short: "Make Horizon match cpactl for what the REST API can write",
		Long: `Reads the desired state (the directory, or --from an LDIF snapshot) and
Horizon, fresh, through the Connection Server --url names, and makes
Horizon match cpactl for what the REST API can write:

  - a site's preferred sites, in rank order (PUT /federation/v3/sites/{id});
  - a global entitlement's scope, use_home_site, require_home_site,
    use_preferred_sites, ignore_preferred_sites_with_high_load,
    session_distribution_policy, enabled and (desktop) backup: the whole
    object is read, these fields changed, and PUT back whole;
  - home sites (/federation/v2/home-sites): rows created, moved and removed.
    A Horizon row of a user, group or entitlement cpactl does not hold is
    left alone.

It prints the plan (method, path, object, each field before -> after;
-o json|yaml) and exits 2 when there is something to do, 0 when nothing.
It writes only with --yes, or after a question on a terminal. Before each
write it reads the object again: changed since the plan (the API has no
version to assert), nothing is written for it and cpactl exits 5. After
each write it reads the object back (allowing for Horizon's cache lag). A
write whose answer is lost is read back: written (a note), not written
(exit 1) or unknown (exit 7). What cpactl holds that the API cannot write
(the four pae-* thresholds) is listed as "not pushed".

The REST account needs Administrators on the root federated access group.
The directory is the one the context (or CPACTL_URL, CPACTL_BIND_DN and
CPACTL_BIND_PASSWORD) names: below ` + "`cpactl horizon`" + `, --url, -W, -y,
--ca-file and --timeout speak of Horizon. See docs/horizon.md.`,
		Example: `  CPACTL_HORIZON_PASSWORD=... cpactl horizon push --url https://cs1.corp.example.com \
      --domain CORP --user svc-cpactl                  # the plan; exit 2 when there is one
  cpactl horizon push --url https://cs1.corp.example.com --domain CORP --user svc-cpactl --yes
  cpactl export -O fed.ldif && cpactl horizon push --from fed.ldif --url https://cs1 --domain CORP --user svc -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	o.readFlags.add(cmd)
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "write without asking (needed when stdin or stdout is not a terminal)")
	return cmd
}

func (o *horizonPushOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	if o.From == "" && len(o.g.URLs) == 0 && o.g.OpenStore == nil {
		// Below `cpactl horizon`, -H is not there: --url is Horizon's.
		return errorf("name the directory with --context or CPACTL_URL (and CPACTL_BIND_DN, CPACTL_BIND_PASSWORD), or pass --from FILE.ldif (cpactl export)",
			"no directory given: push reads the desired state from it")
	}
	st, closeFn, err := o.g.ReadStore(o.From)
	if err != nil {
		return err
	}
	defer closeFn()
	recs, err := horizonpush.Read(st)
	if err != nil {
		return err
	}
	desired, err := horizonpush.Desired(recs)
	if err != nil {
		return refused(err)
	}
	c, base, err := o.h.client(o.g, horizon.MaxPageSize)
	if err != nil {
		return err
	}
	return o.g.interruptible(func(ctx context.Context) (err error) {
		s, err := c.Login(ctx, base)
		if err != nil {
			return err
		}
		defer func() {
			if lerr := s.Logout(ctx); lerr != nil && err == nil {
				fmt.Fprintf(o.g.IO.Err, "note: logging out of %s failed: %v\n", s.URL(), lerr)
			}
		}()
		state, err := s.ReadState(ctx, desired.Wanted())
		if err != nil {
			return err
		}
		plan, err := s.PlanPush(ctx, state, desired)
		if err != nil {
			return err
		}
		if err := horizonpush.Check(plan, recs); err != nil {
			return refused(err)
		}
		structured := p.Format == output.JSON || p.Format == output.YAML
		if structured {
			err = p.Print(planView(plan), nil)
		} else {
			err = writePlan(o.g.IO.Out, plan)
		}
		if err != nil {
			return err
		}
		n := len(plan.Changes)
		if n == 0 {
			return nil
		}
		if !o.Yes {
			if o.g.Interactive == nil || !o.g.Interactive() || o.g.Prompter == nil {
				fmt.Fprintf(o.g.IO.Err, "%d %s not written: pass --yes to write %s\n", n, plural(n, "change", "changes"), plural(n, "it", "them"))
				return silentExit(ExitDiff)
			}
			if err := ask(o.g, "pushing to Horizon", fmt.Sprintf("Write these %d %s to %s?", n, plural(n, "change", "changes"), s.URL())); err != nil {
				return err
			}
		}
		out := o.g.IO.Out
		if structured {
			out = o.g.IO.Err // stdout holds one JSON or YAML document
		}
		return s.Push(ctx, plan, horizon.PushOptions{Done: func(ch horizon.Change, note string) {
			if note != "" {
				fmt.Fprintln(o.g.IO.Err, "note: "+note)
			}
			fmt.Fprintln(out, doneLine(ch))
		}})
	})
}

// pushPlanView is the plan as -o json|yaml prints it.
type pushPlanView struct {
	Server    string              `json:"server"`
	Changes   []horizon.Change    `json:"changes"`
	NotPushed []horizon.NotPushed `json:"not_pushed"`
}

func planView(p *horizon.Plan) pushPlanView {
	v := pushPlanView{Server: p.Server, Changes: p.Changes, NotPushed: p.NotPushed}
	if v.Changes == nil {
		v.Changes = []horizon.Change{}
	}
	if v.NotPushed == nil {
		v.NotPushed = []horizon.NotPushed{}
	}
	return v
}

// writePlan prints the plan for a person: each write, its fields before
// -> after, then what is not pushed.
func writePlan(w io.Writer, p *horizon.Plan) error {
	var b strings.Builder
	if len(p.Changes) == 0 {
		fmt.Fprintf(&b, "Horizon (%s) matches cpactl for what push writes: nothing to do\n", p.Server)
	} else {
		fmt.Fprintf(&b, "plan for %s: %d %s\n", p.Server, len(p.Changes), plural(len(p.Changes), "write", "writes"))
	}
	for _, c := range p.Changes {
		fmt.Fprintf(&b, "%s %s  %s %s\n", c.Method, c.Path, c.Kind, c.Object)
		for _, f := range c.Fields {
			fmt.Fprintf(&b, "    %s: %s -> %s\n", f.Field, showValue(f.Before), showValue(f.After))
		}
	}
	if len(p.NotPushed) > 0 {
		fmt.Fprintf(&b, "not pushed:\n")
		for _, np := range p.NotPushed {
			what := np.Object
			if np.Field != "" {
				what += " " + np.Field
			}
			if np.Value != "" {
				what += " = " + np.Value
			}
			fmt.Fprintf(&b, "    %s: %s\n", what, np.Reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// showValue renders a field's value: lists joined, nothing as (none).
func showValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "(none)"
	case []string:
		if len(x) == 0 {
			return "(none)"
		}
		return strings.Join(x, ", ")
	}
	return fmt.Sprint(v)
}

// doneLine reports a write Horizon confirmed.
func doneLine(c horizon.Change) string {
	switch c.Method {
	case "POST":
		return fmt.Sprintf("created %s of %s (site %s)", c.Kind, c.Object, showValue(c.Fields[0].After))
	case "DELETE":
		return fmt.Sprintf("deleted %s of %s", c.Kind, c.Object)
	}
	if c.Kind == objkind.HomeSiteRow {
		return fmt.Sprintf("updated %s of %s (site %s)", c.Kind, c.Object, showValue(c.Fields[0].After))
	}
	return fmt.Sprintf("updated %s %s (%s)", c.Kind, c.Object, strings.Join(c.FieldNames(), ", "))
}
