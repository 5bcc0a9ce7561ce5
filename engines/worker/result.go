package worker

import (
	"errors"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/tools"
	"github.com/engine-brain/brain/validators"
)

// ResultSchemaName names the result_schema check in validation_correction
// events and metrics.
const ResultSchemaName = "result_schema"

// finish ends the task with args, once its result is checked against the
// recipe's result_schema (see checked). c is the finish_task call that
// carries it; its ID is empty for a result given as free text. done says
// the task ended (with next); else the model was corrected and answers
// again.
func finish(e *rounds.Ending, c conversation.ToolCall, args tools.FinishArgs) (next lifecycle.Event, done bool) {
	args, refused, ok := checked(e, c, args)
	if !ok {
		return "", false
	}
	if c.ID != "" {
		if refused != "" {
			e.Refuse(c, refused)
		} else {
			e.Deliver(c, tools.FinishResult(args))
		}
	}
	e.Finish(args)
	return lifecycle.Finish, true
}

// checked applies the recipe's result_schema to a result with status done.
// A result that matches it comes back with its JSON as Data. One that does
// not is refused with the validator's errors as a correction, while the
// correction budget lasts (ok false: the model answers again); once the
// budget is spent, the task fails: args come back with status failed and a
// result that tells the parent why, with the last result the worker gave,
// and refused is the error result of the call. A failed result, or a
// recipe without a schema, is let through as it is.
func checked(e *rounds.Ending, c conversation.ToolCall, args tools.FinishArgs) (out tools.FinishArgs, refused string, ok bool) {
	doc := e.Recipe().ResultSchema
	if doc == nil || args.Status != tools.FinishDone {
		return args, "", true
	}
	s, err := tools.CompileResultSchema(doc)
	if err != nil { // loading lints it: a recipe built in code may not be
		text := "The worker's recipe has a result_schema that " + err.Error() + "; fix the recipe. The worker's result was:\n\n" + args.Result
		return tools.FinishArgs{Result: text, Status: tools.FinishFailed}, text, true
	}
	data, err := s.Check(args.Result)
	if err == nil {
		args.Data = data
		return args, "", true
	}
	var re *tools.ResultError
	if !errors.As(err, &re) {
		re = &tools.ResultError{Problems: []string{err.Error()}}
	}
	if e.Correct(c, validators.Correction{Validator: ResultSchemaName, Text: err.Error()}) {
		return args, "", false
	}
	budget := e.Recipe().Validation.Corrections()
	text := fmt.Sprintf("The worker's result did not match its recipe's result_schema, and the corrections it may make "+
		"(validation.max_corrections: %d) were spent, so the task failed. What is wrong with its last result:\n- %s\n\nIts last result:\n\n%s",
		budget, strings.Join(re.Problems, "\n- "), args.Result)
	refused = fmt.Sprintf("finish_task refused: the result does not match the result schema:\n- %s\n"+
		"The corrections are spent: the task failed, and its parent was told why.", strings.Join(re.Problems, "\n- "))
	return tools.FinishArgs{Result: text, Status: tools.FinishFailed}, refused, true
}
