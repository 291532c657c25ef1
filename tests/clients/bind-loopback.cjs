// Preloaded into a Node server the tests start (`node --require bind-loopback.cjs ...`):
// a server that listens on a port alone (every interface) listens on 127.0.0.1 instead,
// since servers in the tests are reachable from this machine only.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const port = Number(args[0]);
    const rest = args.slice(1).filter((arg) => typeof arg !== "string");
    return listen.call(this, port, "127.0.0.1", ...rest);
  }
  if (args[0] && typeof args[0] === "object" && !args[0].host && args[0].port !== undefined) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
