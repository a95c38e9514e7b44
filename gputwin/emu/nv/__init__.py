"""The emulated NVIDIA GPU: GPFIFO front end (channel.py), host semaphores (host.py), compute (compute.py)
and copy (copy.py) classes, the whole device (gpu.py). The PTX shader core is emu/nv/ptx/."""
