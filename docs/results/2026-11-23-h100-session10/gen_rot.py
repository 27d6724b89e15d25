src=open('/work/main/kernels/sglang/rotary_embedding.cu').read()
spec=open('/work/main/kernels/sglang/rotary_embedding.cu.astra.json').read()
head=src[:src.index('template <typename T>')]
inst=src[src.index('template __global__'):src.index('template <typename T>\nvoid launch')]
def kernel(vecbytes, tokexpr):
    W='uint4' if vecbytes==16 else 'uint2'
    return '''template <typename T>
__device__ void rotate_heads(T *__restrict__ heads, const T *__restrict__ cos_cache, const T *__restrict__ sin_cache,
                             int num_heads, int head_size, int rot_dim) {
  const int half = rot_dim / 2;
  constexpr int VEC = %d / sizeof(T);
  const int hv = half / VEC;
  for (int p = threadIdx.x; p < num_heads * hv; p += blockDim.x) {
    const int head = p / hv;
    const int i = (p %% hv) * VEC;
    T *h = heads + head * head_size;
    %s c4 = *(const %s *)(cos_cache + i), s4 = *(const %s *)(sin_cache + i);
    %s a4 = *(const %s *)(h + i), b4 = *(const %s *)(h + i + half), o1, o2;
    const T *c = (const T *)&c4, *s = (const T *)&s4, *x1 = (const T *)&a4, *x2 = (const T *)&b4;
    T *y1 = (T *)&o1, *y2 = (T *)&o2;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      const float cc = to_float(c[k]), ss = to_float(s[k]), a = to_float(x1[k]), b = to_float(x2[k]);
      y1[k] = from_float<T>(a * cc - b * ss);
      y2[k] = from_float<T>(b * cc + a * ss);
    }
    *(%s *)(h + i) = o1;
    *(%s *)(h + i + half) = o2;
  }
}

template <typename T>
__global__ void rotary_embedding(const int64_t *__restrict__ positions, T *__restrict__ query, T *__restrict__ key,
                                 const T *__restrict__ cos_sin_cache, int rot_dim,
                                 int num_heads, int num_kv_heads,
                                 int head_size) {
  const int64_t token = %s;
  const T *cos_cache = cos_sin_cache + positions[token] * rot_dim;
  const T *sin_cache = cos_cache + rot_dim / 2;
  rotate_heads(query + token * num_heads * head_size, cos_cache, sin_cache,
               num_heads, head_size, rot_dim);
  rotate_heads(key + token * num_kv_heads * head_size, cos_cache, sin_cache,
               num_kv_heads, head_size, rot_dim);
}

''' % (vecbytes, W,W,W,W,W,W,W,W, tokexpr)
R='(int64_t)blockIdx.x * blockDim.y + threadIdx.y'
variants={
 'rot_v16': (kernel(16,'blockIdx.x'), '"T"', '"min(Hq * rot / 2, 512)"'),
 'rot_v16_b256': (kernel(16,'blockIdx.x'), '"T"', '"min(Hq * rot / 16, 512)"'),
 'rot_v16_b128': (kernel(16,'blockIdx.x'), '"T"', '"128"'),
 'rot_v8_b256': (kernel(8,'blockIdx.x'), '"T"', '"min(Hq * rot / 8, 512)"'),
 'rot_v16_b256_r2': (kernel(16,R), '"T / 2"', '["min(Hq * rot / 16, 512)", 2, 1]'),
 'rot_v16_b128_r4': (kernel(16,R), '"T / 4"', '[128, 4, 1]'),
}
for name,(k,g,b) in variants.items():
    open(name+'.cu','w').write(head+k+inst)
    s=spec.replace('"grid": "T", "block": "min(Hq * rot / 2, 512)"', '"grid": %s, "block": %s'%(g,b))
    assert s!=spec or name=='rot_v16'
    open(name+'.cu.astra.json','w').write(s)
