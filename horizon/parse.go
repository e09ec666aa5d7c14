package horizon

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// What the client reads of the server's answers by hand: error bodies, the
// paging and throttling headers the swagger does not declare, and a JWT's
// exp claim. Everything here takes outside input; FuzzParse* cover it.

// maxMessage is how much of a server's error message an error keeps.
const maxMessage = 200

// parseAPIError reads an error body: an APIError {error_key,
// error_message}, the throttling shape {status, errors: [{error_key,
// error_message}]}, or an array of APIError (the swagger's 4xx answers).
// Anything else gives empty strings. Both are cut to one short line.
func parseAPIError(body []byte) (key, msg string) {
	type apiError struct {
		Key string `json:"error_key"`
		Msg string `json:"error_message"`
	}
	var one struct {
		apiError
		Errors []apiError `json:"errors"`
	}
	if json.Unmarshal(body, &one) == nil {
		key, msg = one.Key, one.Msg
		if key == "" && msg == "" && len(one.Errors) > 0 {
			key, msg = one.Errors[0].Key, one.Errors[0].Msg
		}
	} else {
		var list []apiError
		if json.Unmarshal(body, &list) == nil && len(list) > 0 {
			key, msg = list[0].Key, list[0].Msg
		}
	}
	return cleanLine(key), cleanLine(msg)
}

// cleanLine keeps s on one line of printable characters, at most
// maxMessage runes.
func cleanLine(s string) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = b.Len() > 0
			continue
		}
		if n == maxMessage {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// retryAfterHeader is the throttling header (Horizon's throttling guide;
// not in the swagger).
const retryAfterHeader = "X-Rate-Limit-Retry-After-Seconds"

// parseRetryAfter reads X-Rate-Limit-Retry-After-Seconds: whole (or
// decimal) seconds, at least 0. ok is false when the value is absent or
// not a number; the wait is capped at max.
func parseRetryAfter(v string, max time.Duration) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f >= max.Seconds() {
		return max, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// The paging headers (Horizon's pagination guide; not in the swagger).
const (
	hasMoreHeader    = "HAS_MORE_RECORDS"
	totalCountHeader = "X-TOTAL-COUNT"
)

// hasMore reads HAS_MORE_RECORDS: present (with any value but "false")
// means another page follows; absent means this is the last one.
func hasMore(h http.Header) bool {
	vs := h.Values(hasMoreHeader) // Has_more_records once read
	if len(vs) == 0 {
		return false
	}
	return !strings.EqualFold(strings.TrimSpace(vs[0]), "false")
}

// totalCount reads X-TOTAL-COUNT; -1 when absent or not a count.
func totalCount(h http.Header) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get(totalCountHeader)), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// jwtExpiry reads the exp claim of a JWT (RFC 7519), without checking its
// signature: the client only uses it to renew a token before the server
// refuses it. ok is false for anything that is not a JWT with a numeric
// exp.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > 16<<10 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	f, err := claims.Exp.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}
