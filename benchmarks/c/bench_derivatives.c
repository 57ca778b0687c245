#define _POSIX_C_SOURCE 199309L
/* Single-call timing of two symdyn modules (old_*, new_*: benchmarks/bench_derivatives.py renames them), every
   function interleaved in one process. Each round runs at another stack offset (16 offsets, 256 bytes apart,
   covering 4 KB), and bench_derivatives.py runs several processes: the time of a long function changed up to
   3x from one process or executable to another (where the stack and the arrays land), so medians are taken
   over both. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include <string.h>
#define S(x) #x
#define DECL(p) \
 void p##_inverse_dynamics(const double*, const double*, const double*, double*); \
 void p##_forward_dynamics(const double*, const double*, const double*, double*); \
 void p##_inverse_dynamics_derivatives(const double*, const double*, const double*, double*, double*); \
 void p##_forward_dynamics_derivatives(const double*, const double*, const double*, double*, double*, double*);
DECL(old) DECL(new)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void* a, const void* b) { double x = *(double*)a, y = *(double*)b; return (x > y) - (x < y); }
#define SD_NOINLINE __attribute__((noinline))
#define NS 1000
static SD_NOINLINE double timed(int f, const double* q, const double* v, const double* a, int nq, int nv, double* o1,
                                double* o2, double* o3) {
  double t0 = now();
  for (int s = 0; s < NS; s++) {
    const double *qs = q + s * nq, *vs = v + s * nv, *as = a + s * nv;
    switch (f) {
      case 0: old_inverse_dynamics(qs, vs, as, o1); break;
      case 1: new_inverse_dynamics(qs, vs, as, o1); break;
      case 2: old_forward_dynamics(qs, vs, as, o1); break;
      case 3: new_forward_dynamics(qs, vs, as, o1); break;
      case 4: old_inverse_dynamics_derivatives(qs, vs, as, o1, o2); break;
      case 5: new_inverse_dynamics_derivatives(qs, vs, as, o1, o2); break;
      case 6: old_forward_dynamics_derivatives(qs, vs, as, o1, o2, o3); break;
      case 7: new_forward_dynamics_derivatives(qs, vs, as, o1, o2, o3); break;
    }
    __asm__ volatile("" ::: "memory");
  }
  return (now() - t0) / NS;
}
/* timed() below `offset` bytes of padding on the stack */
static SD_NOINLINE double shifted(int f, int offset, const double* q, const double* v, const double* a, int nq, int nv,
                                  double* o1, double* o2, double* o3) {
  char pad[offset];
  pad[0] = 0;
  __asm__ volatile("" : : "r"(pad) : "memory");
  return timed(f, q, v, a, nq, nv, o1, o2, o3);
}
int main(int argc, char** argv) {
  int nq = atoi(argv[1]), nv = atoi(argv[2]), quat = atoi(argv[3]), reps = atoi(argv[4]);
  double *q = malloc(sizeof(double) * NS * nq), *v = malloc(sizeof(double) * NS * nv), *a = malloc(sizeof(double) * NS * nv);
  double *o1 = malloc(sizeof(double) * nv * nv), *o2 = malloc(sizeof(double) * nv * nv), *o3 = malloc(sizeof(double) * nv * nv);
  srand(1);
  for (int i = 0; i < NS * nq; i++) q[i] = 2.0 * rand() / RAND_MAX - 1;
  for (int i = 0; i < NS * nv; i++) { v[i] = 2.0 * rand() / RAND_MAX - 1; a[i] = 2.0 * rand() / RAND_MAX - 1; }
  if (quat >= 0) for (int s = 0; s < NS; s++) { double *x = q + s * nq + quat, n = 0; for (int i = 0; i < 4; i++) n += x[i] * x[i]; for (int i = 0; i < 4; i++) x[i] /= sqrt(n); }
  /* old ID, new ID, old FD, new FD, old dID, new dID, old dFD, new dFD */
  double* t[8]; for (int f = 0; f < 8; f++) t[f] = malloc(sizeof(double) * reps);
  for (int r = 0; r < reps; r++) for (int f = 0; f < 8; f++) t[f][r] = shifted(f, (r % 16) * 256 + 16, q, v, a, nq, nv, o1, o2, o3);
  /* the medians over the rounds, in the order of names[] (bench_derivatives.py takes the median over processes) */
  for (int f = 0; f < 8; f++) {
    qsort(t[f], reps, sizeof(double), cmp);
    printf("%.2f%c", t[f][reps / 2], f == 7 ? '\n' : ' ');
  }
  return 0;
}
