package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The front authorizes a message before the SDK dispatches it, so it must
// read the message exactly as the SDK will, or a request could be
// authorized as one thing and run as another. It therefore reads no JSON
// of its own: the message with the SDK's jsonrpc.DecodeMessage (what the
// SDK's transport calls), and the params of the methods it authorizes or
// answers itself into the SDK's own params types, with the decoder and the
// option the SDK decodes params with (segmentio/encoding, member names
// matched case-sensitively). Whatever the message's shape, the SDK alone
// judges it and words the error. FuzzFrontReadsAsTheSDK holds the front to
// what the SDK dispatches.

// errBatch: JSON-RPC batches are refused (MCP 2025-06-18 and later dropped
// them, and the front authorizes one message at a time).
var errBatch = errors.New("JSON-RPC batches are not supported: send one message per request")

// peek is what the front needs of a request.
type peek struct {
	ID     json.RawMessage // the id as the SDK writes it back; nil for a notification
	Method string
	Params struct {
		ok                    bool // params read as the SDK reads them for Method
		Name                  string
		Cursor                string
		Meta                  map[string]any
		ResourceSubscriptions []string
	}
}

// readMessage is the request in body as the SDK reads it; nil when the SDK
// would dispatch nothing (not a request: malformed, or a response), which
// the front leaves to the SDK to answer. A batch is refused (errBatch).
func readMessage(body []byte) (*peek, error) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, errBatch
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return nil, nil
	}
	m := &peek{Method: req.Method}
	if req.ID.IsValid() {
		m.ID = encodeID(req.ID)
	}
	p := &m.Params
	switch req.Method {
	case "tools/call":
		var cp *mcp.CallToolParamsRaw
		if p.ok = decodeParams(req.Params, &cp) && cp != nil; p.ok {
			p.Name, p.Meta = cp.Name, cp.Meta
		}
	case "tools/list":
		var lp *mcp.ListToolsParams
		if p.ok = decodeParams(req.Params, &lp); p.ok && lp != nil {
			p.Cursor, p.Meta = lp.Cursor, lp.Meta
		}
	case "subscriptions/listen":
		var sp *mcp.SubscriptionsListenParams
		if p.ok = decodeParams(req.Params, &sp) && sp != nil; p.ok {
			p.Meta = sp.Meta
			if sp.Notifications != nil {
				p.ResourceSubscriptions = sp.Notifications.ResourceSubscriptions
			}
		}
	}
	return m, nil
}

// decodeParams reads params as the SDK does before it dispatches (go-sdk
// v1.8.0 methodInfo.unmarshalParams: absent params stay nil).
func decodeParams[P any](raw json.RawMessage, p *P) bool {
	if raw == nil {
		return true
	}
	dec := segjson.NewDecoder(bytes.NewReader(raw))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(p) == nil
}

// encodeID writes id as the SDK writes it in its answers (encoding/json,
// HTML left unescaped).
func encodeID(id jsonrpc.ID) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(id.Raw()) != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func (m *peek) newProtocol() bool {
	v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}
