package horizon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// PushOptions say how Push reports.
type PushOptions struct {
	// Done is called after each write Horizon confirmed and a read back
	// showed; note is not empty when the answer was lost and the read
	// back found the write in place.
	Done func(c Change, note string)
}

// Push makes the plan's writes in order, one at a time. Before each, it
// reads the object again and refuses (ChangedError, nothing written for
// it) when it is not as the plan read it: the API has no version to
// assert. After each, it reads the object back until it shows the write,
// for up to Config.SettleWait (reads may lag behind a write). A write
// whose answer is lost is settled by reading back: written (Done with a
// note), not written (NotWrittenError) or unknown (OutcomeUnknownError);
// it is never sent again. Push stops at the first error: the writes
// before it were confirmed (Done), the ones after it not sent. A
// cancelled ctx stops it between two writes, never in the middle of one.
func (s *Session) Push(ctx context.Context, p *Plan, opts PushOptions) error {
	if opts.Done == nil {
		opts.Done = func(Change, string) {}
	}
	for _, c := range p.Changes {
		if err := ctx.Err(); err != nil {
			return err
		}
		now, err := s.pickNow(ctx, c)
		if err != nil {
			return err
		}
		if !samePicked(now, c.before) {
			return &ChangedError{URL: s.base, Op: c.Op(), Kind: c.Kind, Object: c.Object, Fields: changedFields(c.before, now)}
		}
		// Once sent, a write is seen through: its answer, or a read back.
		wctx := context.WithoutCancel(ctx)
		ans, err := s.Do(wctx, c.Method, c.Path, c.body)
		var lost *LostAnswerError
		switch {
		case errors.As(err, &lost):
			if err := s.settle(wctx, c, lost); err != nil {
				return err
			}
			opts.Done(c, fmt.Sprintf("%s got no answer (%v); a read back shows it was written", c.Op(), lost.Err))
			continue
		case err != nil:
			return err
		}
		if c.bulk > 0 {
			if err := s.checkBulk(c.Op(), ans, c.bulk); err != nil {
				return err
			}
		}
		if got, ok, err := s.readBack(wctx, c); !ok {
			return &OutcomeUnknownError{URL: s.base, Op: c.Op(), Kind: c.Kind, Object: c.Object, Err: readBackError(c, got, err, s.c.cfg.SettleWait)}
		}
		opts.Done(c, "")
	}
	return nil
}

// pickNow reads what c compares: nil when the object is not there (404).
func (s *Session) pickNow(ctx context.Context, c Change) (map[string]any, error) {
	raw, err := s.Get(ctx, c.read, c.query)
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := c.pick(raw)
	if err != nil {
		return nil, &ProtocolError{URL: s.base, Op: "GET " + c.read, Err: err}
	}
	return m, nil
}

// readBack reads c's object until it shows the write, for up to
// SettleWait: the last pick, whether it showed, the last read's error.
func (s *Session) readBack(ctx context.Context, c Change) (map[string]any, bool, error) {
	var got map[string]any
	var err error
	for _, wait := range settleWaits(s.c.cfg.SettleWait) {
		if wait > 0 {
			if serr := s.c.cfg.Sleep(ctx, wait); serr != nil {
				return got, false, serr
			}
		}
		got, err = s.pickNow(ctx, c)
		if err == nil && shows(got, c.after) {
			return got, true, nil
		}
	}
	return got, false, err
}

// settleWaits are the pauses before each read back: none, then 250 ms
// doubling to 1 s, until they add up to total.
func settleWaits(total time.Duration) []time.Duration {
	waits := []time.Duration{0}
	d, sum := 250*time.Millisecond, time.Duration(0)
	for sum < total {
		waits = append(waits, d)
		sum += d
		d = min(2*d, time.Second)
	}
	return waits
}

// settle finds out what became of a write whose answer was lost: read
// back for up to SettleWait (a write the server received just before the
// connection broke may still be running there). In place: nil. Still as
// before after the wait: NotWrittenError. Anything else, or no read
// answering: OutcomeUnknownError.
func (s *Session) settle(ctx context.Context, c Change, lost *LostAnswerError) error {
	got, ok, err := s.readBack(ctx, c)
	switch {
	case ok:
		return nil
	case err == nil && samePicked(got, c.before):
		return &NotWrittenError{URL: s.base, Op: c.Op(), Kind: c.Kind, Object: c.Object, Err: lost.Err}
	case err != nil:
		return &OutcomeUnknownError{URL: s.base, Op: c.Op(), Kind: c.Kind, Object: c.Object, Lost: true,
			Err: fmt.Errorf("got no answer (%v), and reading it back failed: %w", lost.Err, err)}
	}
	return &OutcomeUnknownError{URL: s.base, Op: c.Op(), Kind: c.Kind, Object: c.Object, Lost: true,
		Err: fmt.Errorf("got no answer (%v), and the read back shows neither the plan's values nor the pushed ones (changed by someone else?)", lost.Err)}
}

func readBackError(c Change, got map[string]any, err error, wait time.Duration) error {
	if err != nil {
		return fmt.Errorf("accepted, but reading it back failed: %w", err)
	}
	var fs []string
	for _, f := range c.FieldNames() {
		if !shows(got, map[string]any{f: c.after[f]}) {
			b, _ := json.Marshal(got[f])
			fs = append(fs, fmt.Sprintf("%s is %s", f, b))
		}
	}
	if got == nil && c.after != nil {
		fs = append(fs, "the object is not there")
	}
	return fmt.Errorf("accepted, but reading it back for %s does not show it: %s", wait, strings.Join(fs, ", "))
}

// changedFields names the fields that differ between two picks.
func changedFields(a, b map[string]any) []string {
	if a == nil || b == nil {
		return []string{"(the object itself)"}
	}
	var out []string
	for k := range a {
		if !samePicked(map[string]any{k: a[k]}, map[string]any{k: b[k]}) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// ChangedError: an object changed in Horizon between the plan and its
// write (the API has no version to assert): nothing was written for it.
type ChangedError struct {
	URL, Op      string
	Kind, Object string
	Fields       []string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s %s changed in Horizon since the plan was read (%s): not written (%s)",
		e.Kind, e.Object, strings.Join(e.Fields, ", "), e.Op)
}

// NotWrittenError: a write got no answer and a read back shows it was not
// applied.
type NotWrittenError struct {
	URL, Op      string
	Kind, Object string
	Err          error
}

func (e *NotWrittenError) Error() string {
	return fmt.Sprintf("%s %s was not written: %s got no answer (%v) and a read back shows it was not applied",
		e.Kind, e.Object, e.Op, e.Err)
}

func (e *NotWrittenError) Unwrap() error { return e.Err }

// OutcomeUnknownError: whether a write is in place cannot be told: its
// answer was lost (Lost) and the read back could not tell, or Horizon
// accepted it and reading it back does not show it.
type OutcomeUnknownError struct {
	URL, Op      string
	Kind, Object string
	Lost         bool
	Err          error
}

func (e *OutcomeUnknownError) Error() string {
	if e.Lost {
		return fmt.Sprintf("%s %s may or may not have been written: %s %v", e.Kind, e.Object, e.Op, e.Err)
	}
	return fmt.Sprintf("%s %s: %s: %v", e.Kind, e.Object, e.Op, e.Err)
}

func (e *OutcomeUnknownError) Unwrap() error { return e.Err }
