package conversation

import (
	"reflect"
	"testing"
)

// doubled returns a deep copy of v with every string and byte slice in it
// repeated twice, and the bytes it added.
func doubled(v reflect.Value) (reflect.Value, int) {
	out := reflect.New(v.Type()).Elem()
	added := 0
	switch v.Kind() {
	case reflect.String:
		out.SetString(v.String() + v.String())
		return out, v.Len()
	case reflect.Pointer:
		if v.IsNil() {
			return out, 0
		}
		elem, n := doubled(v.Elem())
		out.Set(reflect.New(v.Type().Elem()))
		out.Elem().Set(elem)
		return out, n
	case reflect.Slice:
		if v.IsNil() {
			return out, 0
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			out.Set(reflect.AppendSlice(reflect.AppendSlice(out, v), v))
			return out, v.Len()
		}
		out.Set(reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
		for i := range v.Len() {
			elem, n := doubled(v.Index(i))
			out.Index(i).Set(elem)
			added += n
		}
		return out, added
	case reflect.Struct:
		out.Set(v) // unexported fields (time.Time's) as they are
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				field, n := doubled(v.Field(i))
				out.Field(i).Set(field)
				added += n
			}
		}
		return out, added
	}
	out.Set(v)
	return out, 0
}

// TestEventSize checks that Size counts every string and raw JSON value of
// the samples, which set every field there is: doubling each of them must
// grow Size by exactly the bytes added.
func TestEventSize(t *testing.T) {
	t.Parallel()
	for _, e := range samples() {
		v, added := doubled(reflect.ValueOf(e))
		big := v.Interface().(Event)
		if got := big.Size() - e.Size(); got != added {
			t.Errorf("%s: Size grew by %d when its strings and JSON grew by %d bytes: a field is not counted",
				e.Type, got, added)
		}
		if e.Size() <= added {
			t.Errorf("%s: Size = %d, less than its %d bytes of strings and JSON", e.Type, e.Size(), added)
		}
	}
}
