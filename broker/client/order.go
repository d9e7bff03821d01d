package client

import "lookahead/broker/coalloc"

// OrderMeaning says in one line what a queue order (wire.QueuePlace's
// Order, wire.Plan's Order) plans first: the one text of `lookahead
// status` and the web view. An order it does not know is said as such.
func OrderMeaning(order string) string {
	switch order {
	case coalloc.OrderFCFS:
		return "submit time, whatever the max_price"
	case coalloc.OrderPrice, "":
		return "max_price, dearest first, then submit time"
	case coalloc.OrderAging:
		return "submit time, moved earlier by the broker's aging per credit of max_price"
	}
	return "an order this version does not know"
}
