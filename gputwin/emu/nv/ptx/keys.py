"""The scheduling key of a thread (executor.py): key = rank * DEPTH + pc, with rank = MAXD - call depth,
plus SYNC while it waits for its warp at a .sync warp op, plus WAIT while parked at a barrier; EXIT once
it has exited. Smaller keys run first."""
MAXD = 64                     # call-depth rank of the kernel body
DEPTH = 1 << 32               # key = rank * DEPTH + pc
SYNC = 1 << 49                # added to the key of a thread waiting for its warp at a .sync warp op
WAIT = 1 << 50                # added to the key of a thread parked at a barrier
EXIT = 1 << 52                # the key of an exited thread
