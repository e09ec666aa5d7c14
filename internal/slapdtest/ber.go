package slapdtest

import (
	"errors"
	"io"
)

// ReadMessage reads one BER-framed LDAPMessage from r and returns it whole
// with its protocol-op tag: what the tests' TCP proxies between cpactl and
// slapd use to hold, drop or count requests and answers.
func ReadMessage(r io.Reader) ([]byte, byte, error) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, 0, err
	}
	msg := append([]byte(nil), head...)
	n := int(head[1])
	if n&0x80 != 0 {
		lb := make([]byte, n&0x7f)
		if _, err := io.ReadFull(r, lb); err != nil {
			return nil, 0, err
		}
		msg = append(msg, lb...)
		n = 0
		for _, b := range lb {
			n = n<<8 | int(b)
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, 0, err
	}
	msg = append(msg, body...)
	// body: messageID INTEGER (02 len value), then the protocol op.
	if len(body) < 2 || body[0] != 0x02 || 2+int(body[1]) >= len(body) {
		return nil, 0, errors.New("not an LDAPMessage")
	}
	return msg, body[2+int(body[1])], nil
}
