package commands

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/output"
)

// writeDecisionDOT draws the search path of one decision (resolve -o
// dot): the request, then each site in the order considered (its number,
// tier, load and what happened), the pods and pools tried there, a
// backup entitlement's search after the primary's, and the outcome; the
// placement and the path to it are highlighted, what was skipped is
// dashed, full pools are red.
func writeDecisionDOT(w io.Writer, d *broker.Decision) error {
	return output.WriteDOT(w, decisionGraph(d))
}

func decisionGraph(d *broker.Decision) output.Graph {
	r := d.Request
	g := output.Graph{Title: fmt.Sprintf("resolve %s -> %s (seed %d)", r.User, r.Entitlement, d.Seed)}
	via := "pod " + r.ConnectingPod
	if r.ConnectionServer != "" {
		via = "connection server " + r.ConnectionServer + " (pod " + r.ConnectingPod + ")"
	}
	g.Nodes = append(g.Nodes, output.Node{ID: "request", Box: true, Lines: []string{
		r.User + " -> " + r.Entitlement,
		"via " + via + ", site " + r.ConnectingSite,
		fmt.Sprintf("scope %s, policy %s, protocol %s", r.Scope, r.Policy, r.Protocol)}})
	placed := d.Placement != nil
	prev := "request"
	prev = drawVisits(&g, "", d.SiteOrder, prev, placed && d.Backup == nil)
	if b := d.Backup; b != nil {
		id := "backup"
		g.Nodes = append(g.Nodes, output.Node{ID: id, Box: true, Lines: []string{"backup " + b.Entitlement, string(b.Outcome)}})
		g.Edges = append(g.Edges, output.Edge{From: prev, To: id, Label: "no capacity"})
		prev = drawVisits(&g, "backup ", b.SiteOrder, id, placed)
	}
	outcome := output.Node{ID: "outcome", Box: true, Lines: []string{string(d.Outcome), d.Reason}, Emphasis: output.Alert}
	edge := output.Edge{From: prev, To: "outcome"}
	if d.Outcome.GetsSession() {
		outcome.Emphasis, edge.Emphasis = output.Highlight, output.Highlight
	}
	if pl := d.Placement; pl != nil {
		where := "site " + pl.Site + ", pod " + pl.Pod
		for _, p := range []struct{ what, v string }{{"pool", pl.Pool}, {"host", pl.Host}, {"machine", pl.Machine}, {"session", pl.Session}} {
			if p.v != "" {
				where += ", " + p.what + " " + p.v
			}
		}
		outcome.Lines = append(outcome.Lines, where)
	}
	g.Nodes = append(g.Nodes, outcome)
	g.Edges = append(g.Edges, edge)
	return g
}

// drawVisits adds one cluster per site visit, numbered in search order
// and chained from prev, and returns the node the path ends at: the
// placed pool when one took the session, else the last site.
func drawVisits(g *output.Graph, prefix string, visits []broker.SiteVisit, prev string, placed bool) string {
	end := prev
	for i, v := range visits {
		id := fmt.Sprintf("%svisit %d", prefix, i+1)
		c := output.Cluster{ID: id, Label: fmt.Sprintf("%d. %s (%s)", i+1, v.Site, v.Tier)}
		head := output.Node{ID: id + " site", Box: true, Lines: []string{v.Site, visitLoad(v)}}
		if v.Skipped {
			head.Lines = append(head.Lines, "skipped: "+v.SkipReason)
			head.Emphasis, c.Emphasis = output.Muted, output.Muted
		}
		c.Nodes = append(c.Nodes, head)
		edge := output.Edge{From: end, To: head.ID, Label: strconv.Itoa(i + 1)}
		switch {
		case v.Skipped:
			edge.Emphasis = output.Muted
		case placed && placedIn(v):
			edge.Emphasis = output.Highlight
		}
		g.Edges = append(g.Edges, edge)
		end = head.ID
		for j, p := range v.Pods {
			pid := fmt.Sprintf("%s pod %d", id, j+1)
			pn := output.Node{ID: pid, Lines: []string{"pod " + p.Pod, podVisitStatus(p)}}
			if p.Status != broker.StatusSearched {
				pn.Emphasis = output.Muted
			}
			c.Nodes = append(c.Nodes, pn)
			pe := output.Edge{From: head.ID, To: pid, Emphasis: pn.Emphasis}
			for k, q := range p.Pools {
				qid := fmt.Sprintf("%s pool %d", pid, k+1)
				qn := output.Node{ID: qid, Box: true, Lines: []string{"pool " + q.Pool, q.Status}}
				if q.Detail != "" {
					qn.Lines = append(qn.Lines, q.Detail)
				}
				qe := output.Edge{From: pid, To: qid}
				switch q.Status {
				case broker.StatusPlaced:
					qn.Emphasis, qe.Emphasis, pe.Emphasis = output.Highlight, output.Highlight, output.Highlight
					if q.HostSelection != nil && q.HostSelection.Chosen != "" {
						qn.Lines = append(qn.Lines, "host "+q.HostSelection.Chosen)
					}
					if placed {
						end = qid
					}
				case broker.StatusFull, broker.StatusNoHost:
					qn.Emphasis = output.Alert
				default:
					qn.Emphasis, qe.Emphasis = output.Muted, output.Muted
				}
				c.Nodes = append(c.Nodes, qn)
				g.Edges = append(g.Edges, qe)
			}
			g.Edges = append(g.Edges, pe)
		}
		g.Clusters = append(g.Clusters, c)
	}
	return end
}

// placedIn reports whether a pool of the visit took the session.
func placedIn(v broker.SiteVisit) bool {
	for _, p := range v.Pods {
		for _, q := range p.Pools {
			if q.Status == broker.StatusPlaced {
				return true
			}
		}
	}
	return false
}

// visitLoad is a site's load line, with the threshold where it was
// compared.
func visitLoad(v broker.SiteVisit) string {
	load := "load " + formatLoad(v.Load)
	if v.Threshold != nil && v.Load != nil {
		cmp := "<="
		if v.Skipped {
			cmp = ">"
		}
		load = fmt.Sprintf("%s %s %d", load, cmp, *v.Threshold)
	}
	return load
}

// podVisitStatus says what happened at a pod.
func podVisitStatus(p broker.PodVisit) string {
	s := p.Status
	if p.SkipReason != "" {
		s += ": " + p.SkipReason
	}
	if p.Load != nil {
		s += ", load " + formatLoad(p.Load)
	}
	if p.Connecting {
		s += " (connecting pod)"
	}
	return s
}
