package mcpserver

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errInternal is all a client learns of a fault.
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

// recoverTo turns a panic in an SDK goroutine (which would end the process)
// into an internal error for that one call, logged with its stack. Use it
// deferred; errp may be nil.
func (h *Handler) recoverTo(ctx context.Context, errp *error, what string) {
	v := recover()
	if v == nil {
		return
	}
	h.log.ErrorContext(ctx, "panic", "in", what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	if errp != nil {
		*errp = errInternal
	}
}

// recoverMiddleware wraps every method the SDK dispatches.
func (h *Handler) recoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer h.recoverTo(ctx, &err, method)
		return next(ctx, method, req)
	}
}
