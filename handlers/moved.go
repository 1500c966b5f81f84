package handlers

// SagaHandlerName is the payment saga's registration name.
//
// Deprecated: the saga moved to package handlers/stripe; use
// stripe.SagaHandlerName. This copy (stripe imports handlers, so it
// cannot refer to it) stays only until internal/cli's tests name the new
// one; TestMovedSagaHandlerNameIsTheSagas holds the two equal meanwhile.
const SagaHandlerName = "stripe.payment_saga"
