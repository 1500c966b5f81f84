package handlers_test

import (
	"fmt"
	"time"
)

func issuePayload(repo string, number int, title string, updatedAt time.Time) []byte {
	return []byte(fmt.Sprintf(`{"action":"edited","issue":{"number":%d,"title":%q,"state":"open","updated_at":%q},"repository":{"full_name":%q}}`,
		number, title, updatedAt.UTC().Format(time.RFC3339), repo))
}

func pullRequestPayload(repo string, number int, title string, merged bool, updatedAt time.Time) []byte {
	return []byte(fmt.Sprintf(`{"action":"closed","number":%d,"pull_request":{"number":%d,"title":%q,"state":"closed","merged":%t,"updated_at":%q},"repository":{"full_name":%q}}`,
		number, number, title, merged, updatedAt.UTC().Format(time.RFC3339), repo))
}

func paymentSucceededPayload(eventID, pi string, amount int64, created time.Time) []byte {
	return []byte(fmt.Sprintf(`{"id":%q,"object":"event","type":"payment_intent.succeeded","created":%d,"data":{"object":{"id":%q,"object":"payment_intent","amount":%d,"currency":"eur","status":"succeeded"}}}`,
		eventID, created.Unix(), pi, amount))
}

func standardPayload(eventType, resource string, at time.Time) []byte {
	return []byte(fmt.Sprintf(`{"type":%q,"timestamp":%q,"data":{"id":%q}}`, eventType, at.UTC().Format(time.RFC3339), resource))
}

func releasePayload(repo, tag string) []byte {
	return []byte(fmt.Sprintf(`{"action":"published","release":{"tag_name":%q},"repository":{"full_name":%q}}`, tag, repo))
}
