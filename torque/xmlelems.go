package torque

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// decodeElements streams r and decodes every element named elem (at any
// depth) into an X, converts it, and returns the results in order. Errors
// name the tool, the element's position (noun N) and, once decoded, its
// name (from label). A convert error that is an *ItemError keeps the
// converted value; those are returned together as a *SkippedError beside
// the full result.
func decodeElements[X, T any](r io.Reader, tool, elem, noun string, label func(X) string, convert func(X) (T, error)) ([]T, error) {
	dec := xml.NewDecoder(r)
	var out []T
	var skipped []*ItemError
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(skipped) > 0 {
				return out, &SkippedError{Tool: tool, Items: skipped}
			}
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s xml: %w", tool, err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok || start.Name.Local != elem {
			continue
		}
		var x X
		if err := dec.DecodeElement(&x, &start); err != nil {
			return nil, fmt.Errorf("%s xml: %s %d: %w", tool, noun, len(out)+1, err)
		}
		v, err := convert(x)
		if it, ok := asItemError(err); ok {
			skipped = append(skipped, it)
			err = nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s xml: %s %d (%s): %w", tool, noun, len(out)+1, label(x), err)
		}
		out = append(out, v)
	}
}
