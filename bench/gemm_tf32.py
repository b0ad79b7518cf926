"""A GEMM-heavy PyTorch workload for 'cfapkg bench': FP32 matrix products
on the GPU, printing the achieved TFLOPS and whether cuBLAS may use TF32
(TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 forces it on)."""
import time

import torch

N, ITERS = 8192, 30
a = torch.randn(N, N, device="cuda")
b = torch.randn(N, N, device="cuda")
for _ in range(3):
    a @ b
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(ITERS):
    c = a @ b
torch.cuda.synchronize()
dt = time.perf_counter() - t
print(f"tf32 allowed: {torch.backends.cuda.matmul.allow_tf32 or torch.get_float32_matmul_precision() != 'highest'}")
print(f"TFLOPS: {2 * N ** 3 * ITERS / dt / 1e12:.2f}")
