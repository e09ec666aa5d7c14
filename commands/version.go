package commands

import (
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/output"
)

// VersionView is what `cpactl version` prints (JSON contract). Values the
// build did not record are "unknown" (commit, when built with
// -buildvcs=false or outside a repository; module version "(devel)" for
// a build from a work tree, as Go reports it).
type VersionView struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified"` // the work tree had uncommitted changes
	GoVersion string `json:"go_version"`
}

// commit is the VCS commit a build stamps with -ldflags (README "Build"):
//
//	go build -ldflags "-X github.com/cpactl/cpactl/commands.commit=$(git rev-parse HEAD)" ./cmd/cpactl
//
// It names the commit when the build recorded none (-buildvcs=false, a
// tree outside git); what Go recorded wins.
var commit string

// unknownCommit is what the table says when neither Go nor a stamp
// recorded the commit.
const unknownCommit = "unknown (built without VCS information and not stamped: see the README's build command)"

type versionOptions struct {
	g *Globals
	readFlags
	// buildInfo is debug.ReadBuildInfo; a test replaces it.
	buildInfo func() (*debug.BuildInfo, bool)
}

func newVersionCommand(g *Globals) *cobra.Command {
	o := &versionOptions{g: g, buildInfo: debug.ReadBuildInfo}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print cpactl's version, the commit it was built from and the Go version",
		Long: `Prints the module version (a release tag, or "(devel)" for a build from a
work tree), the VCS commit the binary was built from (with "modified" when
the work tree had uncommitted changes) and the Go version that built it,
as the binary recorded them. A build without VCS information
(-buildvcs=false, a tree outside git) names the commit it was stamped with
(-ldflags "-X github.com/cpactl/cpactl/commands.commit=..."), or says it is
unknown. It reads no server.`,
		Example: `  cpactl version
  cpactl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", output.FormatUsage)
	return cmd
}

// versionOf reads what the build recorded.
func versionOf(info *debug.BuildInfo, ok bool) VersionView {
	v := VersionView{Version: "unknown", Commit: "unknown", GoVersion: runtime.Version()}
	if commit != "" {
		v.Commit = commit
	}
	if !ok || info == nil {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		v.GoVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (o *versionOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	v := versionOf(o.buildInfo())
	return p.Print(v, func(w io.Writer) error {
		shown := v.Commit
		switch {
		case shown == "unknown":
			shown = unknownCommit
		case v.Modified:
			shown += " (modified)"
		}
		return output.Fields(w, [][2]string{{"version", v.Version}, {"commit", shown}, {"go", v.GoVersion}})
	})
}
