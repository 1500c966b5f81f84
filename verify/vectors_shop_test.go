package verify

import (
	"time"
)

// shopVectors are the shop and payment providers' trusted vectors.
func shopVectors() []trustedVector {
	lemonBody := `{"meta":{"event_name":"order_created"},"data":{"type":"orders","id":"1","attributes":{"created_at":"2024-03-01T11:59:00.000000Z","updated_at":"2024-03-01T11:59:00.000000Z"}}}`
	return []trustedVector{
		{
			// The test asserts this hmac for this body under testConfig's
			// apiSecretKey; the other headers are its headers() defaults.
			provider: "shopify",
			source: "Shopify/shopify-app-js@ef2043d4a8c4ca0adb9020d76090b2fb94979dab " +
				"packages/apps/shopify-api/lib/webhooks/__tests__/validate.test.ts (secret: lib/__tests__/test-config.ts, headers: webhooks/__tests__/utils.ts)",
			secret: "test_secret_key",
			body:   `{"foo": "bar"}`,
			header: hdr("X-Shopify-Hmac-Sha256", "B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=",
				"X-Shopify-Topic", "products/create", "X-Shopify-Webhook-Id", "123456789",
				"X-Shopify-API-Version", "2023-01", "X-Shopify-Shop-Domain", "shop1.myshopify.io"),
			now:  testNow,
			want: Delivery{ID: "123456789", EventType: "products/create"},
		},
		{
			// A real payment.authorized delivery; X-Razorpay-Event-Id is ours.
			provider: "razorpay",
			source:   "razorpay/razorpay-go@576382675bf45c6fda46508d194efd0be5cb1e9d resources/verify_payment_test.go TestVerifyWebhookSignature",
			secret:   "123456",
			body:     `{"entity":"event","account_id":"acc_HVFD0PFnHPAzKj","event":"payment.authorized","contains":["payment"],"payload":{"payment":{"entity":{"id":"pay_JUEM4c0pSLpFEW","entity":"payment","amount":12300,"currency":"INR","status":"authorized","order_id":"order_JUELuT6cFaHkvd","invoice_id":null,"international":false,"method":"netbanking","amount_refunded":0,"refund_status":null,"captured":false,"description":"#JUELZ1z1EC0pwi","card_id":null,"bank":"SBIN","wallet":null,"vpa":null,"email":"prathmesh.bijjargi@razorpay.com","contact":"+917411714931","notes":[],"fee":null,"tax":null,"error_code":null,"error_description":null,"error_source":null,"error_step":null,"error_reason":null,"acquirer_data":{"bank_transaction_id":"6416615"},"created_at":1652339804}}},"created_at":1652339806}`,
			header: hdr("X-Razorpay-Signature", "ea962f3a2a8090aa14ef10fc178306edcb46ee7ccadae8afe2275cda26f3d2a6",
				"X-Razorpay-Event-Id", "JUEM5CwAfxHfLd"),
			now:  testNow,
			want: Delivery{ID: "JUEM5CwAfxHfLd", EventType: "payment.authorized", OccurredAt: time.Unix(1652339806, 0).UTC()},
		},
		{
			// No provider-published vector exists and the official npm SDK
			// (@lemonsqueezy/lemonsqueezy.js) has no signing code: the
			// signature was computed with openssl, then accepted once by
			// Lemon Squeezy's own Laravel package,
			// VerifyWebhookSignature::isInvalidSignature, under PHP 8.2.
			provider: "lemonsqueezy",
			source:   "verified by lmsqueezy/laravel@50fcb3f714596f55591c32dffff3fba8bede1729 src/Http/Middleware/VerifyWebhookSignature.php",
			secret:   "lemon-signing-secret",
			body:     lemonBody,
			header: hdr("X-Signature", "54328813236d2085108be43bc2ea0d2207b727f058f603b17ad21766281b3638",
				"X-Event-Name", "order_created"),
			now:  testNow,
			want: Delivery{ID: bodySHA(lemonBody), EventType: "order_created", OccurredAt: at("2024-03-01T11:59:00Z")},
		},
		{
			// No provider-published vector exists and the official npm SDK
			// (checkout-sdk-node) has no webhook signature code: the
			// signature was computed with openssl, then accepted once by
			// Checkout.com's own WooCommerce plugin,
			// WC_Checkoutcom_Utility::verify_signature, under PHP 8.2.
			provider: "checkout",
			source:   "verified by checkout/checkout-woocommerce-plugin@71f231bc2fa65b6bd5d68d137f39b0ef8295c04d includes/api/class-wc-checkoutcom-utility.php",
			secret:   "cko-signature-key",
			body:     `{"id":"evt_az5sblvku4ge3dwpztvyizgcau","type":"payment_approved","created_on":"2024-03-01T11:59:00Z","data":{"id":"pay_mbabizu24mvu3mela5njyhpit4"}}`,
			header:   hdr("Cko-Signature", "c6dc3eacd200538955ebe92f821a5f69093e1a82aa9278c8a2b6835df50a0885"),
			now:      testNow,
			want:     Delivery{ID: "evt_az5sblvku4ge3dwpztvyizgcau", EventType: "payment_approved", OccurredAt: at("2024-03-01T11:59:00Z")},
		},
		{
			// No provider-published vector exists: produced once by the
			// official npm SDK mollie-api-typescript@1.12.28,
			// SignatureValidator.createSignature(body, secret), and accepted by
			// its validatePayload(body, "sha256=" + signature). Body and secret
			// from mollie/mollie-api-php@98d010b3d0a9653c5604f948f93ba70a9a3007e4
			// (branch feat/v4-webhook-signature-verifier)
			// tests/Webhooks/WebhookSignatureVerifierTest.php.
			provider: "mollie",
			source:   "produced by npm mollie-api-typescript@1.12.28 SignatureValidator.createSignature",
			secret:   "webhook_secret",
			body:     `{"id":"evt_test","type":"payment-link.paid","entityId":"pl_test","createdAt":"2024-01-01T00:00:00+00:00"}`,
			header:   hdr("X-Mollie-Signature", "sha256=77ffed7a0a427c09a20254c84c607ca1477a544e9bbc77c7eabc97f7b3574fe0"),
			now:      testNow,
			want:     Delivery{ID: "evt_test", EventType: "payment-link.paid", OccurredAt: at("2024-01-01T00:00:00Z")},
		},
		{
			// The same signature without "sha256=": Mollie's docs compare
			// the bare hex, and its SDKs accept both forms.
			provider: "mollie",
			source:   "the mollie-api-typescript signature above, bare (docs.mollie.com/reference/webhooks-best-practices)",
			secret:   "webhook_secret",
			body:     `{"id":"evt_test","type":"payment-link.paid","entityId":"pl_test","createdAt":"2024-01-01T00:00:00+00:00"}`,
			header:   hdr("X-Mollie-Signature", "77ffed7a0a427c09a20254c84c607ca1477a544e9bbc77c7eabc97f7b3574fe0"),
			now:      testNow,
			want:     Delivery{ID: "evt_test", EventType: "payment-link.paid", OccurredAt: at("2024-01-01T00:00:00Z")},
		},
	}
}
