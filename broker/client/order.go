package client

import (
	"fmt"
	"time"

	"lookahead/broker/coalloc"
	"lookahead/internal/durfmt"
)

// OrderMeaning says in one line what a queue order (wire.QueuePlace's
// Order, wire.Plan's Order) plans first: the one text of `lookahead
// status` and the web view. An order it does not know is said as such.
func OrderMeaning(order string) string {
	switch order {
	case coalloc.OrderFCFS, "":
		return "submit time, whatever the max_price"
	case coalloc.OrderPrice:
		return "max_price, dearest first, then submit time"
	case coalloc.OrderAging:
		return "submit time, moved earlier by the broker's aging per credit of max_price"
	}
	return "an order this version does not know"
}

// CheckOrder checks a queue order and its aging rate as a user sets
// them, orderKey and agingKey naming where (planning.order, --order): one
// of the planner's orders ("" is coalloc.DefaultOrder), and a rate, the
// wait one credit per CPU-hour of max_price is worth, exactly when the
// order is aging. The one rule of lookahead-broker's config and
// `lookahead plan`.
func CheckOrder(orderKey, order, agingKey string, aging time.Duration) error {
	order = (coalloc.Options{Order: order}).QueueOrder()
	switch {
	case order != coalloc.OrderFCFS && order != coalloc.OrderPrice && order != coalloc.OrderAging:
		return fmt.Errorf("%s %q: must be %q, %q or %q", orderKey, order, coalloc.OrderFCFS, coalloc.OrderPrice, coalloc.OrderAging)
	case aging < 0:
		return fmt.Errorf("%s %s: must not be negative", agingKey, durfmt.Duration(aging))
	case order == coalloc.OrderAging && aging == 0:
		return fmt.Errorf("%s: required with %s %q: the wait one credit per CPU-hour of max_price is worth, e.g. 2h", agingKey, orderKey, order)
	case order != coalloc.OrderAging && aging != 0:
		return fmt.Errorf("%s %s: only %s %q uses it (the order is %q): remove it or set the order", agingKey, durfmt.Duration(aging), orderKey, coalloc.OrderAging, order)
	}
	return nil
}
