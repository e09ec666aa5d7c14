package commands

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/horizon"
)

type generateOptions struct {
	g        *Globals
	Preset   string
	Seed     int64
	File     string
	Format   string
	PageSize int
	Replace  bool
	// counts holds the count flags; set names those given on the command
	// line, which replace the preset's values.
	counts  generate.Config
	set     map[string]bool
	seedSet bool
}

func newGenerateCommand(g *Globals) *cobra.Command {
	o := &generateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "generate --seed N [--preset demo|cpa-max] [--COUNT N ...] [-O FILE | --format horizon -O DIR]",
		Short: "Write a synthetic, lint-clean federation as LDIF or as a Horizon pull directory (test data, demos, load tests)",
		Long: `Writes a complete synthetic federation as LDIF content records: the base
entry, the containers and cn=Common that ` + "`cpactl init`" + ` creates, then sites with
ranked preferred sites, pods (the last --offline-pods of them OFFLINE),
Connection Servers (some with restriction tags), RDS farms and hosts,
desktop, RDS desktop and application pools, global entitlements of every
kind and option, users in nested groups, client computers, home sites
(global and per entitlement, with group conflicts), pod assignments of
dedicated users, and sessions of entitled users on their entitlement's
pools. Parents come before children, so the file loads with slapadd or
ldapadd into an empty database (not even the base entry) of a slapd with
cpactl's schema; every read command also takes it with --from.

The same flags and seed give the same file, byte for byte; another seed
gives another federation of the same size. What is written passes
` + "`cpactl lint`" + ` with no findings. The output is streamed: memory does not grow
with the number of users or sessions.

Presets (--preset, default demo):
  demo      4 sites, 7 pods, 8 entitlements, 40 users, 60 sessions (229 entries)
  cpa-max   Horizon's Cloud Pod Architecture maximum: 15 sites, 50 pods,
            350 Connection Servers, 1,000 entitlements, 5,000 pools, 1,000 farms
            with 20,000 hosts, 50,000 users in 5,000 groups, 20,000 pod
            assignments and 250,000 sessions (357,928 entries, about 187 MB)

Each count flag replaces the preset's value; the counts must fit together
(every site gets a pod, every pod a Connection Server, every farm a host,
every entitlement a pool, one pod at least stays online). -b sets the base
DN, which must start with dc= or o=.

--format horizon writes the same federation as a pull directory, as
` + "`cpactl horizon pull`" + ` would have written it from a Horizon holding it: the
same files, pages (--page-size, default 1000) and manifest, each record
of the 2512 REST API's schemas, with stable ids and SIDs for the seed;
what the API does not carry (the pae-* thresholds, host features and
connecting sessions, client computers' groups) is left out. -O names the
directory: new, empty, or with --replace an earlier pull. It is written
beside it and renamed into place. See docs/generate.md and docs/horizon.md.`,
		Example: `  # a small federation to try cpactl on, with no server
  cpactl generate --seed 1 -O demo.ldif
  cpactl resolve --from demo.ldif --user gkowalski01 --entitlement "EHR Client 06" --pod lon-1

  # the CPA maximum, bulk-loaded into slapd's (stopped, empty) database
  cpactl generate --preset cpa-max --seed 7 -O cpa-max.ldif
  slapadd -q -f /etc/ldap/slapd.conf -l cpa-max.ldif

  # the CPA maximum as a Horizon pull directory (what horizon pull would write)
  cpactl generate --preset cpa-max --seed 7 --format horizon -O cpa-max.pull

  # the demo with more users and sessions, into a live server
  cpactl generate --seed 2 --users 500 --sessions 2000 | ldapadd -x -H ldap://ldap.example.com -D cn=admin,dc=vdiglobal,dc=vmware,dc=int -W`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.seedSet = cmd.Flags().Changed("seed")
			o.set = map[string]bool{}
			for _, k := range generate.Counts {
				o.set[k.Flag] = cmd.Flags().Changed(k.Flag)
			}
			cfg, err := o.config()
			if err != nil {
				return err
			}
			return o.run(cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Preset, "preset", generate.PresetDemo, "starting counts: "+strings.Join(generate.Presets(), " or "))
	f.Int64Var(&o.Seed, "seed", 0, "seed of every random choice (required): the same flags and seed give the same file")
	f.StringVarP(&o.File, "output-file", "O", "", "write to this file instead of stdout (--format horizon: this directory)")
	f.StringVar(&o.Format, "format", "ldif", "ldif, or horizon: a pull directory as `cpactl horizon pull` writes it (needs -O DIR)")
	f.IntVar(&o.PageSize, "page-size", horizon.MaxPageSize, "--format horizon: records per page of a paged list (1-1000)")
	f.BoolVar(&o.Replace, "replace", false, "--format horizon: replace an earlier pull directory in -O DIR")
	for _, k := range generate.Counts {
		f.IntVar(k.Field(&o.counts), k.Flag, 0, "number of "+k.Usage+" (default: the preset's)")
	}
	return cmd
}

// config validates the flags (no I/O) and returns what to generate.
func (o *generateOptions) config() (generate.Config, error) {
	if !o.seedSet {
		return generate.Config{}, errorf("pass --seed 1 (any integer); the same seed gives the same file again",
			"--seed is required")
	}
	cfg, err := generate.Preset(o.Preset)
	if err != nil {
		return cfg, errorf("", "%v", err)
	}
	for _, k := range generate.Counts {
		if o.set[k.Flag] {
			*k.Field(&cfg) = *k.Field(&o.counts)
		}
	}
	cfg.Seed, cfg.Base = o.Seed, o.g.Base
	if err := cfg.Validate(); err != nil {
		return cfg, errorf("", "%v", err)
	}
	switch o.Format {
	case "ldif":
		if o.Replace || o.PageSize != horizon.MaxPageSize {
			return cfg, errorf("drop them, or pass --format horizon -O DIR (-O FILE is always replaced)",
				"--replace and --page-size are for --format horizon")
		}
	case "horizon":
		if o.File == "" {
			return cfg, errorf("pass -O DIR: a new or empty directory, or an earlier pull with --replace",
				"--format horizon writes a directory, not standard output")
		}
		if o.PageSize < 1 || o.PageSize > horizon.MaxPageSize {
			return cfg, errorf("pass --page-size 1 to 1000 (horizon pull asks for 1000 by default)",
				"--page-size %d is out of range", o.PageSize)
		}
		if cfg.Pods == 0 {
			return cfg, errorf("pass --pods 1 or more", "--format horizon needs a pod: a pull is read through a Connection Server of a pod")
		}
	default:
		return cfg, errorf("pass --format ldif or --format horizon", "unknown --format %q", o.Format)
	}
	return cfg, nil
}

// runHorizon writes the pull directory.
func (o *generateOptions) runHorizon(cfg generate.Config) error {
	m, err := generate.WriteHorizon(o.File, cfg, generate.HorizonOptions{PageSize: o.PageSize, Replace: o.Replace})
	var target *horizon.TargetError
	if errors.As(err, &target) {
		return errorf("-O names a new or empty directory, or with --replace one holding an earlier pull", "%v", err)
	}
	if err != nil {
		return o.failed(err)
	}
	o.g.report("generated a pull directory of %d files (seed %d) in %s: %d pods, %d entitlements, %d users and groups, %d sessions; a pull of it takes %d requests",
		len(m.Files), cfg.Seed, o.File, len(m.Pods), m.Counts["global-desktop-entitlements"]+m.Counts["global-application-entitlements"],
		m.Counts["ad-users-or-groups"], m.Counts["global-sessions"], m.Requests)
	return nil
}

func (o *generateOptions) run(cfg generate.Config) error {
	if o.Format == "horizon" {
		return o.runHorizon(cfg)
	}
	if o.File == "" {
		_, err := generate.Write(o.g.IO.Out, cfg)
		return o.failed(err)
	}
	// A regular file is replaced only when the whole federation is
	// written, so a failure never leaves half of one behind.
	out, err := createOutput(o.File, 0o644)
	if err != nil {
		return err
	}
	defer out.Discard()
	n, err := generate.Write(out, cfg)
	if err == nil {
		err = out.Commit()
	}
	if err != nil {
		return o.failed(err)
	}
	o.g.report("generated %d entries (seed %d) in %s", n, cfg.Seed, o.File)
	return nil
}

// failed turns an error of generate.Write into the command's error:
// counts the generator cannot satisfy name their flags (ConfigError), a
// failed write names the output.
func (o *generateOptions) failed(err error) error {
	if err == nil {
		return nil
	}
	var refused *generate.ConfigError
	if errors.As(err, &refused) {
		return errorf("", "%v", err)
	}
	if o.File != "" {
		return outputFailed(err)
	}
	return errorf("", "cannot write standard output: %v", err)
}
