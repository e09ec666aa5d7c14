package commands

import (
	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
)

// whatIfFlags are the what-if options of every read that decides (resolve,
// simulate storm, impact, loads): changes laid over the directory or the
// snapshot in memory, never written anywhere.
//
// This is the shared contract of the what-if work: overlay is what a
// command calls, whatever the set of flags grows to.
type whatIfFlags struct {
	OfflinePods []string
}

func (w *whatIfFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&w.OfflinePods, "offline-pod", nil, "treat this pod as offline (repeatable)")
}

// overlay returns the store a decision reads: base itself when no what-if
// changes data, else base with the what-ifs laid over it in memory (base is
// never written). list says which what-ifs are in force, in the order given;
// offline are the pods to treat as offline in every request (they are a
// request option of the broker, not data).
func (w *whatIfFlags) overlay(base *directory.Store) (st *directory.Store, list []broker.WhatIf, offline []string, err error) {
	for _, p := range w.OfflinePods {
		list = append(list, broker.WhatIf{Kind: "offline_pod", Target: p})
	}
	return base, list, w.OfflinePods, nil
}
