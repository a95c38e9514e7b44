"""Tensor-core warp matrix instructions (mma.sync, ldmatrix): filled in by the mma family."""
