// Corral's field-truth probe: user-space CUDA faults of the kinds that make the driver log
// an application Xid (13, 31, 43), then a healthy kernel to show the GPU still works.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void wild_write(int *p) { *p = 42; }
__global__ void misaligned(char *base) { *(int *)(base + 1) = 7; }
__global__ void trap_kernel() { __trap(); }
__global__ void far_read(const int *a, int *out) { out[0] = a[(size_t)1 << 34]; }
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "saxpy";
  if (!strcmp(mode, "null-write")) {
    wild_write<<<1, 1>>>((int *)0x10);
  } else if (!strcmp(mode, "misaligned")) {
    char *b; cudaMalloc(&b, 64); misaligned<<<1, 1>>>(b);
  } else if (!strcmp(mode, "trap")) {
    trap_kernel<<<1, 1>>>();
  } else if (!strcmp(mode, "far-read")) {
    int *a, *o; cudaMalloc(&a, 4096); cudaMalloc(&o, 4); far_read<<<1, 1>>>(a, o);
  } else {
    const int n = 1 << 20;
    float *x, *y; cudaMallocManaged(&x, n * 4); cudaMallocManaged(&y, n * 4);
    for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; }
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    cudaError_t e = cudaDeviceSynchronize();
    int bad = 0;
    for (int i = 0; i < n && e == cudaSuccess; i++) bad += y[i] != 4.0f;
    printf("%s: %s, %d wrong of %d\n", mode, cudaGetErrorName(e), bad, n);
    return e != cudaSuccess || bad;
  }
  cudaError_t launch = cudaGetLastError();
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s: launch %s; sync %s (%s)\n", mode, cudaGetErrorName(launch), cudaGetErrorName(e),
         cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
