// A service that receives hookinbox's destination requests: it checks each
// request's Standard Webhooks signature and applies each webhook-id once.
//
//   cd examples/receiver-node && npm ci
//   WEBHOOK_SECRET=whsec_... PORT=9100 node server.js
const http = require("node:http");
const { Webhook } = require("standardwebhooks");

const wh = new Webhook(process.env.WEBHOOK_SECRET);
// webhook-id is the same on every retry of one delivery to one
// destination. A real service records it in its database, in the same
// transaction as the effect, under a unique constraint; a Set stands in
// for that here.
const seen = new Set();

http
  .createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/webhooks") {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      try {
        // Checks the signature over "{webhook-id}.{webhook-timestamp}.{body}"
        // and that the timestamp is recent.
        wh.verify(body, req.headers);
      } catch (err) {
        res.writeHead(401).end("invalid signature");
        return;
      }
      const id = req.headers["webhook-id"];
      if (seen.has(id)) {
        console.log(`duplicate ${id}`); // already applied: 2xx so hookinbox stops retrying
        res.writeHead(200).end();
        return;
      }
      seen.add(id);
      // The effect. hookinbox-stale: true means an older event of this
      // resource than one already sent (ordered routes).
      console.log(`applied ${id} source=${req.headers["hookinbox-source"]} event=${req.headers["hookinbox-event"]} stale=${req.headers["hookinbox-stale"] || ""} bytes=${Buffer.byteLength(body)}`);
      res.writeHead(200).end();
    });
  })
  .listen(Number(process.env.PORT || 9100), "127.0.0.1", () => {
    console.log(`receiving on http://127.0.0.1:${process.env.PORT || 9100}/webhooks`);
  });
