"""Serves a GGUF model with llama.cpp's own HTTP server (the xllamacpp wheel), for
`cargo xtask real-model`. Loopback only, the page's origin allowed (with the Authorization
header, which llama.cpp's default `*` does not cover for browsers), no web UI, no downloads.
Prints one line `listening on http://HOST:PORT` once the model is loaded, then serves until it
is terminated."""

import argparse
import signal
import sys
import threading

import xllamacpp


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True, help="path of the .gguf file")
    parser.add_argument("--alias", required=True, help="the model name the server answers to")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=4096, help="context per slot, in tokens")
    parser.add_argument("--slots", type=int, default=1, help="requests answered at once")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--origin", required=True, help="the page's origin, e.g. http://127.0.0.1:8123")
    args = parser.parse_args()

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    # llama.cpp splits the context between its slots: give each slot the context asked for.
    params.n_ctx = args.ctx * args.slots
    params.n_parallel = args.slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.offline = True
    params.ui = False
    params.cors_origins = args.origin
    params.cors_headers = "*, Authorization"

    server = xllamacpp.Server(params)
    print(f"listening on {server.listening_address}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1.0):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
