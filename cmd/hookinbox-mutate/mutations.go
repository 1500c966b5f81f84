package main

import "slices"

// The promises, as docs/guarantees.md names its rows.
const (
	promiseAcked        = "Nothing acknowledged is lost"
	promiseDuplicate    = "A duplicate creates nothing"
	promiseBadInput     = "Bad input changes nothing"
	promiseRowAndJob    = "The inbox row and its job commit together"
	promiseCompletion   = "Effects commit with the job's completion"
	promiseKeys         = "Derived keys are stable across retries and replays"
	promiseCompensate   = "A compensation runs once"
	promiseOrder        = "Per-resource order"
	promiseIdempotency  = "The Idempotency-Key contract"
	promiseCrossSite    = "The admin listener refuses cross-site requests and foreign Host names"
	promiseSignature    = "Only signed, fresh deliveries are accepted"
	promiseSendOnce     = "One send per delivery and destination"
	promiseRedirect     = "A redirect is never followed"
	promisePause        = "A paused destination sends nothing"
	promiseCountOnce    = "A destination counts each request once"
	promiseLimits       = "A destination's limits hold across replicas"
	promiseRetention    = "Retention never deletes unfinished work"
	promiseRescue       = "Work stranded by a crash resumes within minutes"
	promiseRolling      = "A rolling deploy neither fails nor misses work"
	promiseSecrets      = "Secrets are never stored or shown"
	promiseOffsets      = "A Kafka offset moves only after its messages are stored"
	promiseRoutes       = "A route that fails to evaluate is visible, never silent"
	promiseRouteBounded = "A route's evaluation is bounded"
	promiseChatMarkup   = "Chat messages carry no markup from outside"
	promiseOrderedSends = "An ordered route sends a resource's events one at a time"
	promiseBusyResource = "A busy resource leaves the pool to intake and other resources"
)

// mutations is the table. Each anchor is chosen where the promise is
// decided (a constraint, a guard, a comparison), so that the mutation
// breaks the promise and nothing else, and each test set is the few tests
// that should notice, to keep the whole run within CI's budget.
var mutations = slices.Concat(
	inboxMutations,
	orderMutations,
	adminMutations,
	signatureMutations,
	destinationMutations,
	retentionMutations,
	duplicateMutations,
	rollingMutations,
	settleMutations,
	secretMutations,
	brokerAndRouteMutations,
	routeRowMutations,
	visibleMutations,
	edgeMutations,
	retentionRowMutations,
	edgeCELMutations,
	edgeAdminMutations,
	scopeMutations,
	kafkaRowMutations,
	dedupRowMutations,
	conflictRowMutations,
	genpassMutations,
	listenMutations,
	streamBoundMutations,
	kafkaLagMutations,
	openAPIMutations,
	reviewMutations,
	reviewAlertMutations,
	generatedGapMutations,
	deferRowMutations,
	openGapMutations,
	handOffMutations,
	genpass2Mutations,
	fenceMutations,
)
