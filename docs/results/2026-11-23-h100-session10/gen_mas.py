src=open('/work/main/kernels/sglang/merge_attn_states.cu').read()
spec=open('/work/main/kernels/sglang/merge_attn_states.cu.astra.json').read()
head=src[:src.index('template <typename T>')]
inst=src[src.index('template __global__'):src.index('template <typename T>\nvoid launch')]
def kernel(rowexpr, vec, prefetch=False):
    sig='''template <typename T>
__global__ void merge_attn_states(T *__restrict__ v_merged, float *__restrict__ s_merged, const T *__restrict__ v_a,
                                  const float *__restrict__ s_a, const T *__restrict__ v_b,
                                  const float *__restrict__ s_b, int head_dim) {
  const int64_t row = %s;
''' % rowexpr
    sv='''  const float sa = s_a[row];
  const float sb = s_b[row];
  const float m = fmaxf(sa, sb);
  const float wa = expf(sa - m);
  const float wb = expf(sb - m);
  const float w = wa + wb;
'''
    if not vec:
        body=sv+'''  for (int j = threadIdx.x; j < head_dim; j += blockDim.x) {
    const int64_t i = row * head_dim + j;
    v_merged[i] = from_float<T>((wa * to_float(v_a[i]) + wb * to_float(v_b[i])) / w);
  }
'''
    else:
        comp='''    const T *ea = (const T *)&a; const T *eb = (const T *)&b; uint4 o; T *eo = (T *)&o;
#pragma unroll
    for (int k = 0; k < VEC; ++k) eo[k] = from_float<T>((wa * to_float(ea[k]) + wb * to_float(eb[k])) / w);
    *(uint4 *)(v_merged + i) = o;
'''
        if prefetch:
            body='''  constexpr int VEC = 16 / sizeof(T);
  uint4 a0, b0;
  const bool has0 = threadIdx.x < head_dim / VEC;
  if (has0) { a0 = *(const uint4 *)(v_a + row * head_dim + threadIdx.x * VEC); b0 = *(const uint4 *)(v_b + row * head_dim + threadIdx.x * VEC); }
'''+sv+'''  if (has0) {
    const int64_t i = row * head_dim + threadIdx.x * VEC;
    uint4 a = a0, b = b0;
'''+comp+'''  }
  for (int jv = threadIdx.x + blockDim.x; jv < head_dim / VEC; jv += blockDim.x) {
    const int64_t i = row * head_dim + jv * VEC;
    uint4 a = *(const uint4 *)(v_a + i), b = *(const uint4 *)(v_b + i);
'''+comp+'''  }
'''
        else:
            body='''  constexpr int VEC = 16 / sizeof(T);
'''+sv+'''  for (int jv = threadIdx.x; jv < head_dim / VEC; jv += blockDim.x) {
    const int64_t i = row * head_dim + jv * VEC;
    uint4 a = *(const uint4 *)(v_a + i), b = *(const uint4 *)(v_b + i);
'''+comp+'''  }
'''
    return sig+body+'''  if (threadIdx.x == 0)
    s_merged[row] = m + logf(w);
}

'''
R='(int64_t)blockIdx.x * blockDim.y + threadIdx.y'
variants={
 'mas_vec': (kernel('blockIdx.x',True), '"T * H"', '"D"'),
 'mas_vec_b16': (kernel('blockIdx.x',True), '"T * H"', '"D / 8"'),
 'mas_vec_r4': (kernel(R,True), '"T * H / 4"', '["D / 8", 4, 1]'),
 'mas_vec_r16': (kernel(R,True), '"T * H / 16"', '["D / 8", 16, 1]'),
 'mas_vec_r32': (kernel(R,True), '"T * H / 32"', '["D / 8", 32, 1]'),
 'mas_vec_x32_r8': (kernel(R,True), '"T * H / 8"', '[32, 8, 1]'),
 'mas_vec_x32_r16': (kernel(R,True), '"T * H / 16"', '[32, 16, 1]'),
 'mas_scal_x32_r16': (kernel(R,False), '"T * H / 16"', '[32, 16, 1]'),
 'mas_pre_r16': (kernel(R,True,True), '"T * H / 16"', '["D / 8", 16, 1]'),
 'mas_scal_r4': (kernel(R,False), '"T * H / 4"', '["D", 4, 1]'),
 'mas_scal_r8': (kernel(R,False), '"T * H / 8"', '["D", 8, 1]'),
}
for name,(k,g,b) in variants.items():
    open(name+'.cu','w').write(head+k+inst)
    s=spec.replace('"grid": "T * H", "block": "D"', '"grid": %s, "block": %s'%(g,b))
    open(name+'.cu.astra.json','w').write(s)
