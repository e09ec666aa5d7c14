package impact

// Why a request moves, in a few words for a change ticket ("London's
// rank 1 changed from São Paulo to New York"), read from the two
// decisions' structured parts rather than from their traces; the first
// differing trace step stays in Move.FirstDifference.

import (
	"fmt"
	"strings"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/internal/fold"
)

// whyLimit is the length (in runes) past which a fallback why (a trace
// step) is cut.
const whyLimit = 100

// why says why a request through point p moves from dec[0] to dec[1]
// (either may be nil: the user or the GE is absent on that side). The
// first that applies: the pod it was on is taken offline; it is denied,
// or no longer; the connecting site's preferred list changed where the
// search read it; what became, after, of the site, pod or pool it was
// placed in; the pool that takes it after; the first differing trace
// step.
func (e *engine) why(dec [2]*broker.Decision, p *point, diff Difference) string {
	b, a := dec[0], dec[1]
	switch {
	case b == nil && a == nil:
		return ""
	case b == nil:
		return "the user or the entitlement exists only after the change"
	case a == nil:
		return "the user or the entitlement exists only before the change"
	}
	if pl := b.Placement; pl != nil && e.offline[fold.Key(pl.Pod)] {
		switch b.Outcome {
		case broker.OutcomeReconnect:
			return fmt.Sprintf("pod %s is offline: the session there is ignored", pl.Pod)
		case broker.OutcomeAssigned:
			return fmt.Sprintf("pod %s is offline: the assigned machine there is unavailable", pl.Pod)
		}
		return fmt.Sprintf("pod %s is offline", pl.Pod)
	}
	switch {
	case a.Outcome == broker.OutcomeDenied && b.Outcome != broker.OutcomeDenied:
		return "denied: " + a.Reason
	case b.Outcome == broker.OutcomeDenied && a.Outcome != broker.OutcomeDenied:
		return "no longer denied (" + b.Reason + ")"
	}
	if w := e.preferredWhy(dec, p); w != "" {
		return w
	}
	if w := placedWhy(b.Placement, a); w != "" {
		return w
	}
	if pl := a.Placement; pl != nil && pl.Pool != "" {
		if v := findPool(a.SiteOrder, pl.Site, pl.Pod, pl.Pool); v != nil {
			return fmt.Sprintf("pool %s: %s", pl.Pool, v.Detail)
		}
	}
	l := diff.After
	if l == nil {
		l = diff.Before
	}
	if l == nil {
		return ""
	}
	return cut(l.Message, whyLimit)
}

// preferredWhy names the first rank of the connecting site's preferred
// list that changed, when a search that used preferred sites read it.
func (e *engine) preferredWhy(dec [2]*broker.Decision, p *point) string {
	lists := [2][]string{e.b.f.Sites[p.site[0]].PreferredSites, e.a.f.Sites[p.site[1]].PreferredSites}
	if equalFold(lists[0], lists[1]) {
		return ""
	}
	read := false
	for _, d := range dec {
		for _, v := range d.SiteOrder {
			read = read || v.Tier == broker.TierPreferred
		}
	}
	if !read {
		return ""
	}
	i := 0
	for i < len(lists[0]) && i < len(lists[1]) && fold.Key(lists[0][i]) == fold.Key(lists[1][i]) {
		i++
	}
	at := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "none"
	}
	return fmt.Sprintf("%s's rank %d changed from %s to %s", e.b.f.Sites[p.site[0]].Name, i+1, at(lists[0]), at(lists[1]))
}

// placedWhy says what became, in the decision after, of the site, pod and
// pool the request was placed in before: skipped, or not taking it.
func placedWhy(pl *broker.Placement, a *broker.Decision) string {
	if pl == nil || pl.Pool == "" {
		return ""
	}
	for _, v := range a.SiteOrder {
		if !strings.EqualFold(v.Site, pl.Site) {
			continue
		}
		if v.Skipped {
			return fmt.Sprintf("site %s skipped: %s", v.Site, v.SkipReason)
		}
		for _, pv := range v.Pods {
			if !strings.EqualFold(pv.Pod, pl.Pod) {
				continue
			}
			if pv.Status == broker.StatusSkipped {
				return fmt.Sprintf("pod %s skipped: %s", pv.Pod, pv.SkipReason)
			}
			for _, pool := range pv.Pools {
				if strings.EqualFold(pool.Pool, pl.Pool) && pool.Status != broker.StatusPlaced && pool.Detail != "" {
					return fmt.Sprintf("pool %s: %s", pool.Pool, pool.Detail)
				}
			}
		}
	}
	return ""
}

// findPool finds the visit of a pool in a site order.
func findPool(order []broker.SiteVisit, site, pod, pool string) *broker.PoolVisit {
	for _, v := range order {
		if !strings.EqualFold(v.Site, site) {
			continue
		}
		for _, pv := range v.Pods {
			if !strings.EqualFold(pv.Pod, pod) {
				continue
			}
			for i := range pv.Pools {
				if strings.EqualFold(pv.Pools[i].Pool, pool) {
					return &pv.Pools[i]
				}
			}
		}
	}
	return nil
}

func equalFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if fold.Key(a[i]) != fold.Key(b[i]) {
			return false
		}
	}
	return true
}

// cut shortens s to n runes, with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
