/* SPDX-License-Identifier: MIT */
/* PSNR of a decoded I420 file against the source, luma and all planes, over every frame. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* usage: yuv_psnr WIDTH HEIGHT SOURCE.yuv DECODED.yuv
 * Prints "frames=N psnr_y=D psnr=D": 10 log10(255^2 / MSE), the MSE taken
 * over every luma sample (psnr_y) or every sample of the three planes
 * (psnr), of every frame; the same definition the h264 example uses. */
int main(int argc, char **argv)
{
    FILE *a, *b;
    long w, h, frames = 0;
    size_t luma, frame, i;
    unsigned char *x, *y;
    double sy = 0, sa = 0;

    if (argc != 5 || (w = atol(argv[1])) <= 0 || (h = atol(argv[2])) <= 0) {
        fprintf(stderr, "usage: yuv_psnr WIDTH HEIGHT SOURCE.yuv DECODED.yuv\n");
        return 2;
    }
    a = fopen(argv[3], "rb");
    b = fopen(argv[4], "rb");
    luma = (size_t)w * (size_t)h;
    frame = luma + luma / 2;
    x = malloc(frame);
    y = malloc(frame);
    if (a == NULL || b == NULL || x == NULL || y == NULL) {
        fprintf(stderr, "yuv_psnr: cannot read the files\n");
        return 1;
    }
    while (fread(x, 1, frame, a) == frame && fread(y, 1, frame, b) == frame) {
        for (i = 0; i < frame; ++i) {
            double d = (double)x[i] - (double)y[i];
            sa += d * d;
            if (i < luma)
                sy += d * d;
        }
        ++frames;
    }
    if (frames == 0) {
        fprintf(stderr, "yuv_psnr: no whole frame in common\n");
        return 1;
    }
    sy /= (double)luma * (double)frames;
    sa /= (double)frame * (double)frames;
    printf("frames=%ld psnr_y=%.3f psnr=%.3f\n", frames, sy > 0 ? 10 * log10(65025 / sy) : 99,
           sa > 0 ? 10 * log10(65025 / sa) : 99);
    return 0;
}
