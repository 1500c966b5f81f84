package destination

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/hookinbox/hookinbox/internal/config"
)

// DefaultCostLimit bounds one evaluation of a route's expression, in CEL's
// cost units (about one per value visited): far above any filter or
// transform of a webhook's fields, far below a runaway comprehension over
// a large body.
const DefaultCostLimit = 1_000_000

// MaxMaxOutputBytes is the largest MaxOutputBytes: CEL measures values in
// 32 bits.
const MaxMaxOutputBytes = math.MaxUint32

// maxValueDepth is the deepest value the memory limit measures: the JSON
// parser's own nesting limit, so no parsed body is refused for its depth.
const maxValueDepth = 10000

// exprEnv is the CEL environment of route expressions: the delivery's
// fields as variables, the strings, encoders and math extensions, the
// chat escapes (expr_chat.go), and no
// clock (CEL has no now()), so a result is a function of the delivery
// alone and a replay evaluates to the same.
var exprEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(chatEscapes(),
		cel.Variable("body", cel.DynType),
		cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable("event", cel.StringType),
		cel.Variable("source", cel.StringType),
		cel.Variable("delivery_id", cel.StringType),
		cel.Variable("received_at", cel.TimestampType),
		cel.Variable("resource", cel.StringType),
		ext.Strings(), ext.Encoders(), ext.Math(),
	)...)
})

// routeExpr is a route's compiled filter and transform; nil fields are
// absent.
type routeExpr struct {
	filter, transform cel.Program
	maxOutput         int // bytes: config.Route.MaxOutputBytes
}

// compileRoute type-checks r's expressions. Errors name the expression
// and the position in it.
func compileRoute(r config.Route) (*routeExpr, error) {
	if r.Filter == "" && r.Transform == "" {
		return nil, nil
	}
	limit := r.CostLimit
	if limit == 0 {
		limit = DefaultCostLimit
	}
	x := &routeExpr{maxOutput: r.MaxOutputBytes}
	if x.maxOutput == 0 {
		// What a source may receive: a transform sends no more.
		x.maxOutput = config.DefaultMaxBodyBytes
	}
	var err error
	if r.Filter != "" {
		if x.filter, err = compileExpr("filter", r.Filter, limit, x.maxOutput, cel.BoolType); err != nil {
			return nil, err
		}
	}
	if r.Transform != "" {
		if x.transform, err = compileExpr("transform", r.Transform, limit, x.maxOutput,
			cel.MapType(cel.StringType, cel.DynType), cel.ListType(cel.DynType), cel.StringType); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// compileExpr compiles src, whose result must be one of want (or dyn,
// checked when it runs).
//
// CEL's cost limit counts operations, not bytes: a list of maps that each
// name the same large string costs a few units an element and encodes to
// that string's size times the list's. CEL's memory limit measures every
// value an evaluation reads or builds by its aggregate size, each string
// at its length (a unit a byte), and so bounds a transform by what its
// value encodes to before it is encoded: an element's size is never more
// than its JSON's. Its traversal limit is the limit itself, as each node
// counts at least one: a value it stops counting is over the limit anyway.
// Inside a comprehension it measures each step's values the first time
// only: measuring the growing result at every step is quadratic in the
// list (a 40,000-item map took 28s); the result is measured whole where
// the comprehension yields it, and the cost limit bounds the steps.
func compileExpr(field, src string, limit uint64, maxBytes int, want ...*cel.Type) (cel.Program, error) {
	env, err := exprEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%s: %s", field, iss.Err())
	}
	out := ast.OutputType()
	ok := out.IsExactType(cel.DynType)
	for _, w := range want {
		ok = ok || w.IsAssignableType(out)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %q yields %s; want %s", field, src, out, typeNames(want))
	}
	size := types.NewSizeCalculator(types.SizeCalculatorStringUnitLength(1),
		types.SizeCalculatorMaxDepth(maxValueDepth), types.SizeCalculatorMaxTraversal(maxBytes))
	return env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(limit),
		cel.MemoryTracking(types.MemoryTrackerSizeCalculator(size), types.MemoryTrackerSampleInterval(math.MaxUint32)),
		cel.MemoryLimit(uint32(maxBytes)))
}

func typeNames(ts []*cel.Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// ExprInput is what a route's expressions see of one delivery.
type ExprInput struct {
	Source, EventType, DeliveryID string
	ReceivedAt                    time.Time
	Resource                      string
	Header                        http.Header
	Body                          []byte
	ContentType                   string

	vars map[string]any // built on first use, shared by every evaluation
}

// activation is the expressions' variables. The body is parsed once, when
// an expression first reads it, however many routes and references read
// it after.
func (in *ExprInput) activation() map[string]any {
	if in.vars != nil {
		return in.vars
	}
	headers := make(map[string]string, len(in.Header))
	for k, v := range in.Header {
		if len(v) == 0 {
			continue
		}
		lower := strings.ToLower(k)
		if _, taken := headers[lower]; taken && !firstSpelling(in.Header, lower, k) {
			continue
		}
		headers[lower] = v[0]
	}
	body := sync.OnceValue(func() any { return parseBody(in.Body, in.ContentType) })
	in.vars = map[string]any{
		"body":        func() any { return body() },
		"headers":     headers,
		"event":       in.EventType,
		"source":      in.Source,
		"delivery_id": in.DeliveryID,
		"received_at": in.ReceivedAt,
		"resource":    in.Resource,
	}
	return in.vars
}

// firstSpelling reports whether k is the first, in byte order, of h's
// names that lower-case to lower. A Kafka delivery keeps its names as the
// producer spelled them, so two may differ only in case; the route sees
// one of them, the same one on every evaluation.
func firstSpelling(h http.Header, lower, k string) bool {
	for other := range h {
		if other < k && strings.ToLower(other) == lower {
			return false
		}
	}
	return true
}

// parseBody is body as CEL sees it: parsed JSON, a form's fields, or the
// text.
func parseBody(body []byte, contentType string) any {
	if strings.HasPrefix(strings.ToLower(contentType), "application/x-www-form-urlencoded") {
		if form, err := url.ParseQuery(string(body)); err == nil {
			out := make(map[string]any, len(form))
			for k, v := range form {
				out[k] = v[0]
			}
			return out
		}
	}
	var v any
	if jsonv1.Unmarshal(body, &v) == nil {
		return v
	}
	return string(body)
}

// outcomeRouteFailed is the Observe outcome of a send whose route's
// filter or transform failed to evaluate.
const outcomeRouteFailed = "route_error"

// errNotBool is a filter that yielded something else than a bool.
var errNotBool = errors.New("the filter did not yield a bool")

// OutputLimitError is a route's expression reading, building or yielding
// a value over its route's max_output_bytes.
type OutputLimitError struct {
	Limit int // bytes
}

func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("a value it reads, builds or yields is over max_output_bytes (%d bytes)", e.Limit)
}

// evalErr names the expression (field) that failed and, when CEL's memory
// limit stopped it, the limit.
func (x *routeExpr) evalErr(field string, err error) error {
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) && cancelled.Cause == interpreter.MemoryLimitExceeded {
		err = &OutputLimitError{Limit: x.maxOutput}
	}
	return fmt.Errorf("%s: %w", field, err)
}

// match evaluates the filter: true without one.
func (x *routeExpr) match(in *ExprInput) (bool, error) {
	if x == nil || x.filter == nil {
		return true, nil
	}
	v, _, err := x.filter.Eval(in.activation())
	if err != nil {
		return false, x.evalErr("filter", err)
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("filter: %w (%s)", errNotBool, v.Type())
	}
	return bool(b), nil
}

// apply evaluates the transform into the body to send and its
// Content-Type; without one, the delivery's own.
func (x *routeExpr) apply(in *ExprInput) ([]byte, string, error) {
	if x == nil || x.transform == nil {
		return in.Body, in.ContentType, nil
	}
	v, _, err := x.transform.Eval(in.activation())
	if err != nil {
		return nil, "", x.evalErr("transform", err)
	}
	body, contentType, err := encodeResult(v)
	if err == nil && len(body) > x.maxOutput {
		// The memory limit measured v below its JSON, which quotes,
		// escapes and separates: the bytes themselves decide.
		return nil, "", fmt.Errorf("transform: %w", &OutputLimitError{Limit: x.maxOutput})
	}
	return body, contentType, err
}

// encodeResult turns a transform's value into a body: a string as text, a
// map or list as JSON.
func encodeResult(v ref.Val) ([]byte, string, error) {
	if s, ok := v.(types.String); ok {
		return []byte(s), "text/plain; charset=utf-8", nil
	}
	switch v.Type() {
	case types.MapType, types.ListType:
	default:
		return nil, "", fmt.Errorf("transform: yielded %s; want a map, a list or a string", v.Type())
	}
	native, err := v.ConvertToNative(reflect.TypeOf(&structpb.Value{}))
	if err != nil {
		return nil, "", fmt.Errorf("transform: %w", err)
	}
	// encoding/json, not protojson, whose output changes from build to
	// build on purpose: a body is the same bytes at every attempt and
	// replay, its keys sorted.
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false) // a chat message's "&" stays "&"
	if err := enc.Encode(native.(*structpb.Value).AsInterface()); err != nil {
		return nil, "", fmt.Errorf("transform: %w", err)
	}
	return bytes.TrimSuffix(body.Bytes(), []byte("\n")), "application/json", nil
}

// routeAtSend applies the route that sends l, as configured now: its
// transform replaces l's body. It reports false, with r saying why, when
// no route sends l any more or the route failed to evaluate. The filter is
// evaluated again because an operator may retry a send after fixing it.
func (s *Service) routeAtSend(d *dest, l *loadedSend, r *result) bool {
	in := ExprInput{Source: l.Source, EventType: l.EventType, DeliveryID: l.DeliveryID, Resource: l.Resource.Key,
		Header: l.Header, Body: l.Payload}
	if l.ReceivedAt != nil {
		in.ReceivedAt = *l.ReceivedAt
	}
	if l.ContentType != nil {
		in.ContentType = *l.ContentType
	}
	t, ok, err := s.targets.routeFor(d.Name, &in)
	switch {
	case !ok:
		r.filtered = true
		return false
	case err != nil:
		r.routeErr = err
		return false
	case t.expr == nil || t.expr.transform == nil:
		return true
	}
	body, contentType, err := t.apply(&in)
	if err != nil {
		r.routeErr = err
		return false
	}
	l.Payload, l.ContentType = body, &contentType
	return true
}

// apply is t's transform over in (in's body without one); its error names
// the route.
func (t target) apply(in *ExprInput) ([]byte, string, error) {
	body, contentType, err := t.expr.apply(in)
	if err != nil {
		return nil, "", fmt.Errorf("routes[%d] (%s): %w", t.index, t.route.Source, err)
	}
	return body, contentType, nil
}
