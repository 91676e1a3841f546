<?php

declare(strict_types=1);

namespace Goblin\Symfony\RateLimiter;

use Symfony\Component\OptionsResolver\Options;
use Symfony\Component\OptionsResolver\OptionsResolver;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\Policy\NoLimiter;
use Symfony\Component\RateLimiter\Policy\Rate;
use Symfony\Component\RateLimiter\Util\TimeUtil;

/**
 * Symfony's RateLimiterFactory on Goblin: the same configuration (`id`, `policy`, `limit`,
 * `interval`, `rate: {amount, interval}`, as `framework.rate_limiter` takes it) and the same
 * `create($key)`, its limiters deciding in the server, each decision one Goblin command, on the
 * application's Redis client instead of a storage and a lock. Symfony's factory is final; this
 * one stands in its place in a service definition:
 *
 *     services:
 *         limiter.api:
 *             class: Goblin\Symfony\RateLimiter\RateLimiterFactory
 *             arguments:
 *                 - { id: api, policy: sliding_window, limit: 100, interval: '60 minutes' }
 *                 - '@Redis'
 *
 * A limiter's key is `id-key`, as Symfony's factory names it.
 */
final class RateLimiterFactory
{
    /** @var array{id: string, policy: string, limit?: int, interval?: \DateInterval, rate?: Rate|null} */
    private readonly array $config;

    /** @param \Redis|\RedisArray|\RedisCluster|\Predis\ClientInterface $redis */
    public function __construct(array $config, private readonly object $redis)
    {
        $options = new OptionsResolver();
        self::configureOptions($options);
        $this->config = $options->resolve($config);
    }

    public function create(?string $key = null): LimiterInterface
    {
        $id = $this->config['id'] . '-' . $key;

        return match ($this->config['policy']) {
            'token_bucket' => new TokenBucketLimiter($id, $this->config['limit'], $this->config['rate'], $this->redis),
            'fixed_window' => new FixedWindowLimiter($id, $this->config['limit'], self::seconds($this->config['interval']), $this->redis),
            'sliding_window' => new SlidingWindowLimiter($id, $this->config['limit'], self::seconds($this->config['interval']), $this->redis),
            'no_limit' => new NoLimiter(),
        };
    }

    /** A configured interval in seconds, as Symfony counts it. */
    private static function seconds(\DateInterval $interval): float
    {
        return (float) TimeUtil::dateIntervalToSeconds($interval);
    }

    private static function configureOptions(OptionsResolver $options): void
    {
        $intervalNormalizer = static function (Options $_, string $interval): \DateInterval {
            $now = new \DateTimeImmutable('@' . time());
            $later = @$now->modify('+' . $interval);
            if (false === $later) {
                throw new \LogicException(sprintf(
                    'Cannot parse interval "%s", please use a valid unit as described on https://www.php.net/datetime.formats.relative.',
                    $interval,
                ));
            }

            return $now->diff($later);
        };

        $options
            ->define('id')->required()->allowedTypes('string')
            ->define('policy')->required()->allowedValues('token_bucket', 'fixed_window', 'sliding_window', 'no_limit')
            ->define('limit')->allowedTypes('int')
            ->define('interval')->allowedTypes('string')->normalize($intervalNormalizer)
            ->define('rate')
                ->default(static function (OptionsResolver $rate) use ($intervalNormalizer): void {
                    $rate
                        ->define('amount')->allowedTypes('int')->default(1)
                        ->define('interval')->allowedTypes('string')->normalize($intervalNormalizer);
                })
                ->normalize(static fn (Options $_, array $value): ?Rate => isset($value['interval'])
                    ? new Rate($value['interval'], $value['amount'])
                    : null)
        ;
    }
}
