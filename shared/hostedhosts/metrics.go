package hostedhosts

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// The metric the hosts' group scales out on (the CDK stack's scaling policy reads it).
const (
	MetricNamespace = "kiln"
	MetricWaiting   = "WaitingWin64Builds"
)

// CloudWatch is the part of the CloudWatch API the metric uses.
type CloudWatch interface {
	PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, opts ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// CloudWatchMetrics publishes the waiting builds as kiln/WaitingWin64Builds.
type CloudWatchMetrics struct {
	Client CloudWatch
}

// PublishWaiting puts one data point.
func (m *CloudWatchMetrics) PublishWaiting(ctx context.Context, waiting int) error {
	_, err := m.Client.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{
		Namespace: aws.String(MetricNamespace),
		MetricData: []cwtypes.MetricDatum{{
			MetricName: aws.String(MetricWaiting), Value: aws.Float64(float64(waiting)), Unit: cwtypes.StandardUnitCount,
		}},
	})
	if err != nil {
		return fmt.Errorf("put metric %s/%s: %w", MetricNamespace, MetricWaiting, err)
	}
	return nil
}
