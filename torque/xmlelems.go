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
// name (from label).
func decodeElements[X, T any](r io.Reader, tool, elem, noun string, label func(X) string, convert func(X) (T, error)) ([]T, error) {
	dec := xml.NewDecoder(r)
	var out []T
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
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
		if err != nil {
			return nil, fmt.Errorf("%s xml: %s %d (%s): %w", tool, noun, len(out)+1, label(x), err)
		}
		out = append(out, v)
	}
}
