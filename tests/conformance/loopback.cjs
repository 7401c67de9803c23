// Preloaded into supergateway (`node -r ./loopback.cjs`): it calls `app.listen(port)`, which binds
// every interface. Tests bind only to loopback, so a listen() without a host gets 127.0.0.1.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object' && !Array.isArray(args[0]) && args[0].port !== undefined && args[0].host === undefined && args[0].path === undefined) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
