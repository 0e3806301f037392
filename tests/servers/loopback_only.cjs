// Preloaded with NODE_OPTIONS=--require into npm MCP servers started over HTTP by the tests.
// server-everything listens with app.listen(PORT), i.e. on every interface; the tests must
// bind to loopback only, so a listen() given a port and no host gets host 127.0.0.1.
const net = require("node:net");
const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const portOnly = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (portOnly && (args.length === 1 || typeof args[1] === "function")) {
    return originalListen.call(this, Number(first), "127.0.0.1", ...args.slice(1));
  }
  return originalListen.apply(this, args);
};
