package ldapconn

// The go-ldap reference for the bulk decoder: bulk_test.go checks that
// SearchEach (bulkConn) reads what go-ldap's own decoding reads.

import (
	"context"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// searchEachGoLDAP is SearchEach through go-ldap's own decoding: the
// reference bulkConn's answers are checked against in tests.
func (c *Conn) searchEachGoLDAP(req *ldap.SearchRequest, each func(*ldap.Entry) error) error {
	paging := ldap.NewControlPaging(PageSize)
	page := *req
	page.Controls = append(append([]ldap.Control(nil), req.Controls...), paging)
	for {
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		resp := c.conn.SearchAsync(ctx, &page, 256)
		var cookie []byte
		var stop error
		// A stopped search still reads its page to the end (at most
		// PageSize entries, dropped): slapd keeps one paged search per
		// connection, and a page still being sent when the next search
		// starts would overwrite that search's paging state.
		for resp.Next() {
			if e := resp.Entry(); e != nil {
				if stop == nil {
					stop = each(e)
				}
				continue
			}
			if p, ok := ldap.FindControl(resp.Controls(), ldap.ControlTypePaging).(*ldap.ControlPaging); ok && p != nil {
				cookie = p.Cookie
			}
		}
		cancel()
		if stop != nil {
			paging.SetCookie(cookie)
			c.abandonPaging(req, paging)
			return stop
		}
		if err := resp.Err(); err != nil {
			return c.answered(err, start, "search")
		}
		if len(cookie) == 0 {
			return nil
		}
		paging.SetCookie(cookie)
	}
}

// abandonPaging tells the server that a paged search will not go on (a
// page size of 0 with the last cookie, RFC 2696 §3), so it can free the
// search's state. Failing to is harmless: the server drops it later.
func (c *Conn) abandonPaging(req *ldap.SearchRequest, paging *ldap.ControlPaging) {
	if len(paging.Cookie) == 0 {
		return
	}
	done := *req
	stop := ldap.NewControlPaging(0)
	stop.SetCookie(paging.Cookie)
	done.Controls = append(append([]ldap.Control(nil), req.Controls...), stop)
	_, _ = c.conn.Search(&done)
}
